#!/usr/bin/env node
// Bundles the control-path schemas with the part of zod they use into one file the agent loads
// (`@palisade/protocol/control-schemas/standalone`): the agent checks every control body with the
// same schemas as the console and the dashboard, without carrying all of zod (docs/architecture.md).
// Skipped when the compiled protocol and the lock file are unchanged (scripts/build-stamp.mjs).
import { mkdirSync } from 'node:fs';
import { rolldown } from 'rolldown';
import { buildIfChanged, root } from './build-stamp.mjs';

// The outbound link's frames (`@palisade/protocol/link/standalone`) share the zod part with it.
const input = {
  'control-schemas': `${root}packages/protocol/dist/src/control-schemas.js`,
  link: `${root}packages/protocol/dist/src/link.js`,
};
const dir = `${root}packages/protocol/dist/bundle`;

await buildIfChanged({
  name: 'protocol bundle',
  inputs: ['packages/protocol/dist/src', 'package-lock.json', 'scripts/bundle-protocol.mjs'],
  outputs: ['packages/protocol/dist/bundle/control-schemas.js', 'packages/protocol/dist/bundle/link.js'],
  stamp: 'packages/protocol/dist/bundle/.inputs-sha256',
  build: async () => {
    mkdirSync(dir, { recursive: true });
    const bundle = await rolldown({ input, platform: 'node', logLevel: 'warn' });
    await bundle.write({ dir, format: 'esm', minify: true, sourcemap: false, entryFileNames: '[name].js' });
    await bundle.close();
  },
});
