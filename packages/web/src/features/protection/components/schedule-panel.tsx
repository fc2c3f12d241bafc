import { SCHEDULE_TASKS, type ScheduleTask } from '@palisade/protocol/control';
import { type FormEvent, useState } from 'react';
import { Button } from '../../../components/buttons';
import { SelectField, TextField } from '../../../components/field';
import { ErrorNote, StatusLine } from '../../../components/states';
import { dateTime } from '../../../lib/format';
import { useChangeControl } from '../api/change-control';
import { useControlList } from '../api/get-control';
import { ControlState, editProps, writeError } from './control-state';

/** The agent's maintenance tasks (feed fetches, baseline saves, clearing attack bans) and their cron times. */
export function SchedulePanel({ serverId, canEdit }: { serverId: number; canEdit: boolean }) {
  const schedule = useControlList(serverId, 'schedule');
  const change = useChangeControl(serverId, ['schedule']);
  const [task, setTask] = useState<ScheduleTask>('autofetch');
  const [cron, setCron] = useState('');
  const [formError, setFormError] = useState<string | undefined>();
  const [status, setStatus] = useState('');

  const save = async (event: FormEvent) => {
    event.preventDefault();
    if (cron.trim().split(/\s+/).length !== 5)
      return setFormError('Give a cron expression of five fields: minute hour day month weekday, e.g. 0 3 * * *.');
    setFormError(undefined);
    const out = await change.run({ method: 'POST', path: 'schedule', body: { task, cron: cron.trim() } });
    if (out !== undefined) {
      setStatus(`${task} scheduled at ${cron.trim()}.`);
      setCron('');
    }
  };

  return (
    <section className="card" aria-labelledby="schedule-title">
      <h3 id="schedule-title">Schedule</h3>
      <p className="muted">Cron expressions (minute hour day month weekday) in the agent host's local time.</p>
      <ControlState query={schedule} what="Loading the schedule">
        {(entries) => (
          <div className="table-scroll">
            <table className="table" aria-label="Scheduled tasks">
              <thead>
                <tr>
                  <th scope="col">Task</th>
                  <th scope="col">When</th>
                  <th scope="col">Next run</th>
                  <th scope="col">Last run</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {entries.map((s) => (
                  <tr key={s.task}>
                    <td>
                      <strong>{s.task}</strong>
                      <br />
                      <span className="muted small">{s.what}</span>
                      {s.last_error ? <span className="entry-warning">⚠ {s.last_error}</span> : null}
                    </td>
                    <td className="nowrap">{s.cron ? <code>{s.cron}</code> : 'off'}</td>
                    <td className="nowrap">{s.next_run_at ? dateTime(s.next_run_at) : '—'}</td>
                    <td className="nowrap">{s.last_run_at ? dateTime(s.last_run_at) : 'never'}</td>
                    <td>
                      {s.cron ? (
                        <Button
                          small
                          aria-label={`Turn ${s.task} off`}
                          onClick={() =>
                            void change
                              .run({ method: 'DELETE', path: 'schedule', query: { task: s.task } })
                              .then((out) => out !== undefined && setStatus(`${s.task} turned off.`))
                          }
                          {...editProps(canEdit)}
                        >
                          Turn off
                        </Button>
                      ) : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </ControlState>
      <form className="inline-form" onSubmit={(e) => void save(e)} noValidate aria-label="Set a schedule">
        <SelectField
          label="Task"
          value={task}
          onChange={(e) => setTask(e.target.value as ScheduleTask)}
          {...editProps(canEdit)}
        >
          {SCHEDULE_TASKS.map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </SelectField>
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
      <ErrorNote message={writeError(change.error)} />
      {status ? <StatusLine>{status}</StatusLine> : null}
    </section>
  );
}
