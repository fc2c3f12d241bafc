import { type FormEvent, useState } from 'react';
import { Button } from '../../../components/buttons';
import { TextField } from '../../../components/field';
import { Empty, ErrorNote, StatusLine } from '../../../components/states';
import { dateTime } from '../../../lib/format';
import { useChangeControl } from '../api/change-control';
import { useControl, useControlList } from '../api/get-control';
import { ControlState, editProps, writeError } from './control-state';

interface AgentConfig {
  autofetch?: { enabled?: boolean; feeds?: ({ name?: string; url?: string; enabled?: boolean } | string)[] };
  [key: string]: unknown;
}

interface ScheduleEntry {
  task: string;
  cron: string;
  next_run_at?: number | null;
  last_run_at?: number | null;
}

/** Blocklist feeds: on or off, fetch now; and the cron schedule of the agent's tasks. */
export function FeedsPanel({ serverId, canEdit }: { serverId: number; canEdit: boolean }) {
  const config = useControl<AgentConfig>(serverId, 'config');
  const schedule = useControlList<ScheduleEntry>(serverId, 'schedule');
  const change = useChangeControl(serverId, ['config', 'schedule']);
  const [status, setStatus] = useState('');
  const [task, setTask] = useState('');
  const [cron, setCron] = useState('');
  const [formError, setFormError] = useState<string | undefined>();

  const addSchedule = async (event: FormEvent) => {
    event.preventDefault();
    if (!task.trim() || cron.trim().split(/\s+/).length !== 5)
      return setFormError('Give a task name and a cron expression of five fields, e.g. 0 3 * * *.');
    setFormError(undefined);
    const out = await change.run({ method: 'POST', path: 'schedule', body: { task: task.trim(), cron: cron.trim() } });
    if (out !== undefined) {
      setStatus(`${task} scheduled.`);
      setTask('');
      setCron('');
    }
  };

  return (
    <section className="card" aria-labelledby="feeds-title">
      <h3 id="feeds-title">Blocklist feeds</h3>
      <ControlState query={config} what="Loading feeds">
        {(body) => {
          const feeds = body.autofetch?.feeds ?? [];
          const enabled = body.autofetch?.enabled;
          return (
            <>
              <p>
                Feeds are <strong>{enabled === undefined ? 'unknown' : enabled ? 'on' : 'off'}</strong>.
                {feeds.length > 0
                  ? ` ${feeds.map((f) => (typeof f === 'string' ? f : (f.name ?? f.url ?? '?'))).join(', ')}.`
                  : ''}
              </p>
              <div className="actions">
                <Button
                  onClick={() =>
                    void change
                      .run({ method: 'POST', path: 'autofetch/toggle', body: { enabled: !enabled } })
                      .then((out) => out !== undefined && setStatus(enabled ? 'Feeds turned off.' : 'Feeds turned on.'))
                  }
                  {...editProps(canEdit)}
                >
                  {enabled ? 'Turn feeds off' : 'Turn feeds on'}
                </Button>
                <Button
                  onClick={() =>
                    void change
                      .run({ method: 'POST', path: 'autofetch/fetch-now' })
                      .then((out) => out !== undefined && setStatus('Fetching the feeds now.'))
                  }
                  {...editProps(canEdit)}
                >
                  Fetch now
                </Button>
              </div>
            </>
          );
        }}
      </ControlState>
      <h3>Schedule</h3>
      <ControlState query={schedule} what="Loading the schedule">
        {(entries) => {
          return (
            <>
              {entries.length === 0 ? (
                <Empty>
                  <p>No scheduled tasks.</p>
                </Empty>
              ) : (
                <ul className="plain-list">
                  {entries.map((s) => (
                    <li key={s.task}>
                      <strong>{s.task}</strong> <code>{s.cron}</code>
                      {s.next_run_at ? <span className="muted small"> next {dateTime(s.next_run_at)}</span> : null}
                    </li>
                  ))}
                </ul>
              )}
              <form className="inline-form" onSubmit={(e) => void addSchedule(e)} noValidate>
                <TextField
                  label="Task"
                  value={task}
                  onChange={(e) => setTask(e.target.value)}
                  {...editProps(canEdit)}
                />
                <TextField
                  label="Cron"
                  placeholder="0 3 * * *"
                  value={cron}
                  error={formError}
                  onChange={(e) => setCron(e.target.value)}
                  {...editProps(canEdit)}
                />
                <Button type="submit" busy={change.pending} {...editProps(canEdit)}>
                  Set schedule
                </Button>
              </form>
            </>
          );
        }}
      </ControlState>
      <ErrorNote message={writeError(change.error)} />
      {status ? <StatusLine>{status}</StatusLine> : null}
    </section>
  );
}
