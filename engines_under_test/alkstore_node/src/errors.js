'use strict';
// The contract's error classes (docs/wire-protocol.md, "Errors"): the protocol sends the class by name.

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

module.exports = { ContractError, invalidName, invalidArgument, storeClosed, handleSpent };
