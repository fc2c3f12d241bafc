export * from './agent-address.js';
export * from './benchmark.js';
export * from './control.js';
export * from './envelope.js';
export * from './openapi.js';
export * from './svc1.js';
export * from './tokens.js';
export * from './v1.js';
