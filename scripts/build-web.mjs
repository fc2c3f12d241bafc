#!/usr/bin/env node
// Builds the dashboard (`npm run build -w @palisade/web`: typecheck, Vite, the test build) unless
// its sources, the compiled protocol it imports and the lock file are unchanged since the last
// build (scripts/build-stamp.mjs).
import { execFileSync } from 'node:child_process';
import { buildIfChanged } from './build-stamp.mjs';

const web = 'packages/web';
await buildIfChanged({
  name: 'dashboard',
  inputs: [
    `${web}/src`,
    `${web}/test`,
    `${web}/index.html`,
    `${web}/package.json`,
    `${web}/tsconfig.json`,
    `${web}/tsconfig.test.json`,
    `${web}/vite.config.ts`,
    'tsconfig.base.json',
    'package-lock.json',
    'packages/protocol/dist/src',
  ],
  outputs: [`${web}/dist/index.html`, `${web}/dist/test/package.json`],
  stamp: `${web}/dist/.inputs-sha256`,
  build: () => execFileSync('npm', ['run', 'build', '--silent', '-w', '@palisade/web'], { stdio: 'inherit' }),
});
