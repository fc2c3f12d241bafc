import { since } from '../../../lib/format';
import { useAlertEvaluation } from '../api/get-evaluation';

/**
 * When the console last evaluated the rules ("Rules last checked 5 s ago"), and a warning when that
 * is late: no alert can fire until evaluation runs again (docs/alerts.md, "Timing").
 */
export function EvaluationStatus() {
  const query = useAlertEvaluation();
  const status = query.data;
  if (!status) return null;
  const when = status.last_round_at === null ? 'not yet' : since(status.last_round_at, status.as_of);
  return (
    <p
      className={status.late ? 'state state-error' : 'muted'}
      role={status.late ? 'alert' : undefined}
      data-testid="alert-evaluation"
    >
      Rules last checked {when} (every {status.interval_s} s).
      {status.late ? ' Evaluation is late: no alert can fire until it runs again; see the console log.' : ''}
    </p>
  );
}
