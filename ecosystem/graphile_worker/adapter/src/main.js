#!/usr/bin/env node
'use strict';
// Part of the graphile-worker adapter (ecosystem/graphile_worker/adapter): the process the manifest starts. The wire
// protocol's loop and the contract's front are node_kit's (engines_under_test/node_kit); this process brings the adapter.

const { serveAdapter } = require('alkstore-node-kit');
const { adapter } = require('./adapter');

serveAdapter(adapter);
