import type { Migration, MigrationProvider } from 'kysely';
import { initial } from './0001-initial.js';
import { fleet } from './0002-fleet.js';
import { signingAndTickets } from './0003-signing-and-tickets.js';
import { scaleOut } from './0004-scale-out.js';
import { benchmarkHandoff } from './0005-benchmark-handoff.js';
import { signatureReplay } from './0006-signature-replay.js';
import type { Dialect } from './helpers.js';

export type { Dialect } from './helpers.js';

/** Every migration, in order. Names sort in the order they must run; never edit a landed one, add the next. */
function migrations(dialect: Dialect): Record<string, Migration> {
  return {
    '0001_initial': initial(dialect),
    '0002_fleet': fleet,
    '0003_signing_and_tickets': signingAndTickets(dialect),
    '0004_scale_out': scaleOut,
    '0005_benchmark_handoff': benchmarkHandoff,
    '0006_signature_replay': signatureReplay,
  };
}

export function migrationProvider(dialect: Dialect): MigrationProvider {
  return {
    async getMigrations() {
      return migrations(dialect);
    },
  };
}
