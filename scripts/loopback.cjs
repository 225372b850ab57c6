// Node preload (`node --require ./scripts/loopback.cjs ...`) that forces every
// listening TCP server onto 127.0.0.1, for servers that take no host option and
// would otherwise bind all interfaces. Unix-socket and fd listens are untouched.
'use strict';
const net = require('net');

const HOST = '127.0.0.1';
const origListen = net.Server.prototype.listen;

net.Server.prototype.listen = function listen(...args) {
  const first = args[0];
  if (first !== null && typeof first === 'object' && !Array.isArray(first)) {
    // listen(options[, backlog][, cb])
    if (first.path === undefined && first.fd === undefined && first.handle === undefined && !first._handle) {
      args[0] = Object.assign({}, first, { host: HOST });
    }
  } else if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    // listen(port[, host][, backlog][, cb])
    if (typeof args[1] === 'string' || args[1] === undefined || args[1] === null) {
      args[1] = HOST;
      if (args.length < 2) args.length = 2;
    } else {
      // listen(port, backlog?, cb) or listen(port, cb): insert the host
      args.splice(1, 0, HOST);
    }
  } else if (first === undefined || typeof first === 'function') {
    // listen() or listen(cb): random port
    args.unshift(0, HOST);
  }
  return origListen.apply(this, args);
};
