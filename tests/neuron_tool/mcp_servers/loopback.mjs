// Preloaded with `node --import` so that a server calling `listen(port)` binds
// to 127.0.0.1 rather than to every interface (the test suite stays on loopback).
import net from "node:net";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || typeof args[0] === "string") {
    const [port, ...rest] = args;
    const callback = rest.find((arg) => typeof arg === "function");
    return listen.call(this, { port: Number(port), host: "127.0.0.1" }, callback);
  }
  return listen.apply(this, args);
};
