'use strict';
// Part of the Node kit (engines_under_test/node_kit): what a Node.js adapter over a job library imports, in one place.
// The front (the contract's surface over a driver), the protocol loop, the input rules, the error classes,
// the backoff curve and the table of wire ops; see README.md for how an adapter is put together.

module.exports = {
  ...require('./front'),
  ...require('./protocol'),
  ...require('./backoff'),
  ...require('./ops'),
  errors: require('./errors'),
  validate: require('./validate'),
};
