import {
  DEFAULT_ROLLOUT_WAVES,
  parseRolloutWaves,
  type Rollout,
  UPDATE_HEALTH_TIMEOUT_DEFAULT_S,
} from '@palisade/protocol';
import { type FormEvent, useState } from 'react';
import { Button } from '../../../components/buttons';
import { SelectField, TextField } from '../../../components/field';
import { ErrorNote } from '../../../components/states';
import { useMutation } from '../../../lib/query';
import { startRollout } from '../api/agent-updates';
import {
  HEALTH_TIMEOUT_MAX_MINUTES,
  HEALTH_TIMEOUT_MIN_MINUTES,
  healthTimeoutSeconds,
  reachText,
  servers,
} from '../rollout-text';

/**
 * Start a rollout to the version this console serves (docs/fleet.md, "Agent updates"): all servers or
 * one tag's, in waves (checked as typed, with how far each reaches), with the time a new version has
 * to check in before the root updater puts the previous one back.
 */
export function StartRolloutForm({
  version,
  outdated,
  tags,
  onStarted,
}: {
  version: string;
  /** Servers on another version than `version`, all of the account's. */
  outdated: number;
  /** The account's tags, each with how many servers carry it. */
  tags: { tag: string; servers: number }[];
  onStarted?: (rollout: Rollout) => void;
}) {
  const [tag, setTag] = useState('');
  const [waves, setWaves] = useState(DEFAULT_ROLLOUT_WAVES);
  const [minutes, setMinutes] = useState(String(UPDATE_HEALTH_TIMEOUT_DEFAULT_S / 60));
  const [tried, setTried] = useState(false);
  const start = useMutation(startRollout, onStarted);

  const parsed = parseRolloutWaves(waves);
  const wavesError = 'error' in parsed ? parsed.error : undefined;
  const timeout = healthTimeoutSeconds(minutes);
  const timeoutError = 'error' in timeout ? timeout.error : undefined;
  const tagged = tags.find((t) => t.tag === tag)?.servers ?? 0;
  const reach = reachText(waves, tag ? tagged : outdated);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setTried(true);
    if (wavesError || !('seconds' in timeout)) return;
    void start.run({ ...(tag ? { tag } : {}), waves: waves.trim(), health_timeout_s: timeout.seconds });
  };

  return (
    <form className="form rollout-form" onSubmit={submit} noValidate aria-label="Start a rollout">
      <SelectField
        label="Servers"
        value={tag}
        onChange={(e) => setTag(e.target.value)}
        hint={
          tag
            ? `${servers(tagged)} tagged ${tag}; those on another version than ${version} take part.`
            : `${servers(outdated)} on another version than ${version} take part.`
        }
      >
        <option value="">All servers</option>
        {tags.map((t) => (
          <option key={t.tag} value={t.tag}>
            Tagged {t.tag} ({servers(t.servers)})
          </option>
        ))}
      </SelectField>
      <TextField
        label="Waves"
        value={waves}
        spellCheck={false}
        autoComplete="off"
        onChange={(e) => setWaves(e.target.value)}
        error={wavesError}
        hint={
          <>
            Counts or percentages, each counted from the start: <code>{DEFAULT_ROLLOUT_WAVES}</code> updates one server,
            then up to 10 % in all, then the rest. A wave starts when every server in the one before is updated.
            {reach ? (
              <>
                {' '}
                <span data-testid="wave-reach">
                  With {servers(tag ? tagged : outdated)}: {reach}.
                </span>
              </>
            ) : null}
          </>
        }
      />
      <TextField
        label="Health timeout (minutes)"
        inputMode="decimal"
        value={minutes}
        onChange={(e) => setMinutes(e.target.value)}
        error={tried || minutes.trim() !== '' ? timeoutError : undefined}
        hint={`How long a new version has to check in before the server puts the previous one back: ${HEALTH_TIMEOUT_MIN_MINUTES} to ${HEALTH_TIMEOUT_MAX_MINUTES} minutes.`}
      />
      <div className="actions">
        <Button type="submit" variant="primary" busy={start.pending} disabled={Boolean(wavesError)}>
          Start rollout to {version}
        </Button>
      </div>
      <ErrorNote message={start.error} />
    </form>
  );
}
