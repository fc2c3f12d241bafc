import { createRequire } from 'node:module';
import type IpAddr from 'ipaddr.js';

// ipaddr.js is CommonJS. `import` of a CommonJS module makes Node scan it for named exports,
// which costs about 9 MB resident for the agent's lifetime; `require` costs about 1 MB.
const require = createRequire(import.meta.url);

export const ipaddr: typeof IpAddr = require('ipaddr.js');
export type IpAddress = IpAddr.IPv4 | IpAddr.IPv6;
export type IPv6Address = IpAddr.IPv6;
