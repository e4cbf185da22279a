"""Engines that keep the contract in a way the shipped ones do not, which the suite must certify."""
