// Preloaded into Portkey's gateway (`node --import`, the ES-module form of `--require`): it listens on every interface, and the
// bench binds loopback only. Every listen() on a port is forced onto 127.0.0.1.
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function listenOnLoopback(...args) {
  if (typeof args[0] === 'object' && args[0] !== null && !args[0].path) {
    args[0] = { ...args[0], host: '127.0.0.1' };
  } else if (typeof args[0] === 'number' || /^\d+$/.test(String(args[0]))) {
    const callback = args.find((arg) => typeof arg === 'function');
    const backlog = typeof args[2] === 'number' ? args[2] : undefined;
    args = [{ port: Number(args[0]), host: '127.0.0.1', backlog }];
    if (callback) args.push(callback);
  }
  return listen.apply(this, args);
};
