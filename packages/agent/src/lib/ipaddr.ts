// The strict address parser lives in packages/protocol/src/networks.ts, shared with the console.
export { type IPv6Address, type IpAddress, ipaddr, parseCidr, parseIp } from '@palisade/protocol/networks';
