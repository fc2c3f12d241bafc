import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROTECTED_SERVICES } from '@palisade/protocol/control';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { CONSOLE_VERSION } from '../../config.js';
import { executableAsset, IN_EXECUTABLE } from '../../packaged.js';
import { RELEASE_SIGNATURE, readReleaseKey, servedAgentVersion } from '../../release-key.js';
import { consoleUrl, shQuote } from '../console-url.js';

// This file runs compiled, from <console package>/dist/src/routes/install/, in a checkout and in the npm tarball.
const PACKAGE_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const SCRIPT = join(PACKAGE_ROOT, 'install/agent.sh');

/**
 * The only files `GET /install/<name>` serves, by exact name (docs/agent.md, "One-line install"):
 * a request never becomes a path. `version` is the agent version SHA256SUMS names
 * (servedAgentVersion, docs/decisions.md "The served agent version"), checked against a strict form.
 */
export const installArtifacts = (version: string) =>
  [
    `palisade-agent_${version}_amd64.deb`,
    `palisade-agent-${version}-linux-x64`,
    `palisade-agent-${version}.mjs`,
    `palisade-agent-${version}-geo.tar`,
  ] as const;

const missingArtifacts = (dir: string) =>
  `This console has no agent packages in ${dir}: run \`npm run package\` in the Palisade checkout ` +
  '(or set PALISADE_ARTIFACTS_DIR to the directory holding SHA256SUMS and the palisade-agent files), then try again.\n';

const plain = (reply: FastifyReply, status: number, text: string) =>
  reply.status(status).header('cache-control', 'no-store').type('text/plain; charset=utf-8').send(text);

/** The install script and what it downloads, without authentication: the enrolment token is the script's argument. */
export default async function installRoutes(app: FastifyInstance) {
  const dir = app.config.artifactsDir;
  const sumsFile = join(dir, 'SHA256SUMS');
  // Read at each request: a new release dropped into the directory is served without a restart.
  const served = () => servedAgentVersion(dir, CONSOLE_VERSION).version;

  /**
   * SHA256SUMS limited to the served names, or null when the packages are not there. Signed, it is
   * served as signed, byte for byte (SHA256SUMS.sig is the signature of the whole file).
   */
  const sums = (): string | null => {
    if (!existsSync(sumsFile)) return null;
    if (readReleaseKey(dir) !== null) return readFileSync(sumsFile, 'utf8');
    const names: readonly string[] = installArtifacts(served());
    const lines = readFileSync(sumsFile, 'utf8')
      .split('\n')
      .filter((line) => names.includes(line.split('  ')[1] ?? ''));
    return lines.length > 0 ? `${lines.join('\n')}\n` : null;
  };

  // Served with or without the packages: without them, the script's first download (SHA256SUMS)
  // is the 503 below, whose text the script prints, so the pasted line fails saying what to do.
  app.get('/install/agent.sh', (request, reply) => {
    // The console fills in its own address (from validated parts, or PALISADE_PUBLIC_URL) and
    // version, so the pasted line needs only the token: each as one single-quoted sh word, in one
    // pass with a function replacer, which reads no replacement patterns (`$&`, `$'`) in what it
    // puts in and never looks inside a value it put in.
    const values: Record<string, string> = {
      CONSOLE_URL: shQuote(consoleUrl(request)),
      VERSION: shQuote(served()),
      PROTECTED_SERVICES: shQuote(PROTECTED_SERVICES.join(' ')),
    };
    const template = IN_EXECUTABLE ? String(executableAsset('install/agent.sh')) : readFileSync(SCRIPT, 'utf8');
    const script = template.replace(/@(CONSOLE_URL|VERSION|PROTECTED_SERVICES)@/g, (_, name: string) => values[name]!);
    return reply.header('cache-control', 'no-store').type('text/x-shellscript; charset=utf-8').send(script);
  });

  app.get('/install/SHA256SUMS', (_request, reply) => {
    const text = sums();
    return text === null ? plain(reply, 503, missingArtifacts(dir)) : plain(reply, 200, text);
  });

  // The signature (raw, 64 bytes) the script checks against the key its line pins; 404 unsigned.
  app.get('/install/SHA256SUMS.sig', (_request, reply) => {
    if (readReleaseKey(dir) === null) {
      return plain(
        reply,
        404,
        'not found: the artifacts this console serves are unsigned (no SHA256SUMS.sig and release.pub)\n',
      );
    }
    return reply
      .header('cache-control', 'no-store')
      .type('application/octet-stream')
      .send(readFileSync(join(dir, RELEASE_SIGNATURE)));
  });

  app.get<{ Params: { artifact: string } }>('/install/:artifact', (request, reply) => {
    const artifacts = installArtifacts(served());
    const name = artifacts.find((n) => n === request.params.artifact);
    if (name === undefined) {
      return plain(reply, 404, `not found: this console serves ${artifacts.join(', ')} and SHA256SUMS\n`);
    }
    const file = join(dir, name);
    if (!existsSync(file)) return plain(reply, 503, missingArtifacts(dir));
    return reply
      .header('cache-control', 'no-store')
      .header('content-length', statSync(file).size)
      .type('application/octet-stream')
      .send(createReadStream(file));
  });
}
