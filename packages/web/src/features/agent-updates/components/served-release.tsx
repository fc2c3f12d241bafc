import { Link } from 'react-router';
import type { AgentUpdates } from '../api/agent-updates';
import { servers } from './labels';

/** The agent version this console serves, whether it is signed, and how many servers run another one. */
export function ServedRelease({ data }: { data: AgentUpdates }) {
  return (
    <>
      <dl className="tiles served-release">
        <div>
          <dt>Agent version served</dt>
          <dd data-testid="served-version">{data.served_version ?? 'none'}</dd>
        </div>
        <div>
          <dt>Release signature</dt>
          <dd>
            {data.served_version === null ? (
              <span className="muted">—</span>
            ) : data.signed ? (
              <span className="pill pill-ok">Signed</span>
            ) : (
              <span className="pill pill-failed">Unsigned</span>
            )}
          </dd>
        </div>
        <div>
          <dt>On another version</dt>
          <dd data-testid="outdated">
            {data.served_version === null ? <span className="muted">—</span> : servers(data.outdated)}
          </dd>
        </div>
      </dl>
      {data.served_version === null ? (
        <p className="note note-warn">
          This console serves no agent packages, so there is nothing to roll out. Run <code>npm run package</code> in
          the Palisade checkout, or set <code>PALISADE_ARTIFACTS_DIR</code> to a directory holding a release.
        </p>
      ) : !data.signed ? (
        <p className="note note-bad">
          Agents refuse unsigned updates. Sign the release (<code>npm run package -- --sign-key FILE</code>, the key
          from <code>palisade-console release-key new</code>) and serve it with its <code>SHA256SUMS.sig</code> and{' '}
          <code>release.pub</code>.
        </p>
      ) : data.outdated === 0 ? (
        <p className="note note-ok">
          Every server checked in on {data.served_version}. <Link to="/dashboard">See the fleet</Link>.
        </p>
      ) : null}
    </>
  );
}
