'use strict';
// Part of the Node kit (engines_under_test/node_kit): the contract's error classes (docs/wire-protocol.md, "Errors").
// The protocol sends the class by name; the Node engine and the Node ecosystem adapters throw these.

class ContractError extends Error {
  constructor(className, message) {
    super(message);
    this.className = className;
  }
}

const invalidName = (message) => new ContractError('InvalidName', message);
const invalidArgument = (message) => new ContractError('InvalidArgument', message);
const storeClosed = (message) => new ContractError('StoreClosed', message);
const handleSpent = (message) => new ContractError('HandleSpent', message);
const storeUnavailable = (message) => new ContractError('StoreUnavailable', message);

module.exports = { ContractError, invalidName, invalidArgument, storeClosed, handleSpent, storeUnavailable };
