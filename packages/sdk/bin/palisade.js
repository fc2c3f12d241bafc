#!/usr/bin/env node
// A committed shim, so npm links this bin on install even before dist/ is built (docs/decisions.md).
import '../dist/src/cli.js';
