import { PINNED_RELEASE_KEY } from '../release.js';
import { applyUpdate, requireRoot, runningExecutable, systemdControl } from '../update/apply.js';
import { supervise } from '../update/supervise.js';
import { CliError } from './commands.js';

/** One progress line with its time, for the journal or the supervisor's log. */
const logLine = (line: string) => process.stdout.write(`${new Date().toISOString()} info ${line}\n`);

export interface ApplyUpdateOptions {
  stateDir: string;
  bin?: string;
  releaseKeyFile?: string;
  systemdUnit: string;
}

/**
 * `palisade-agent apply-update` (docs/agent.md, "The root updater"): what the systemd path unit
 * starts when the agent leaves a request. Without one there is nothing to do.
 */
export async function applyUpdateCommand(o: ApplyUpdateOptions): Promise<void> {
  try {
    requireRoot('palisade-agent apply-update');
  } catch (err) {
    throw new CliError((err as Error).message, 2);
  }
  const result = await applyUpdate({
    stateDir: o.stateDir,
    bin: o.bin ?? runningExecutable(),
    releaseKeyFile: o.releaseKeyFile ?? PINNED_RELEASE_KEY,
    control: systemdControl(o.systemdUnit),
    log: logLine,
  });
  if (result === null) logLine('apply-update: no update requested');
  else if (result.state === 'failed') throw new CliError(`update refused: ${result.reason}`);
}

export interface SuperviseCommandOptions {
  config: string;
  stateDir: string;
  bin?: string;
  user: string;
  releaseKeyFile?: string;
}

/** `palisade-agent supervise`: the agent as a child of root's, restarted and updated (hosts without systemd). */
export async function superviseCommand(o: SuperviseCommandOptions): Promise<void> {
  try {
    requireRoot('palisade-agent supervise');
  } catch (err) {
    throw new CliError((err as Error).message, 2);
  }
  await supervise({
    config: o.config,
    stateDir: o.stateDir,
    bin: o.bin ?? runningExecutable(),
    user: o.user,
    releaseKeyFile: o.releaseKeyFile ?? PINNED_RELEASE_KEY,
    releaseKeyExplicit: o.releaseKeyFile !== undefined,
    log: logLine,
  });
}
