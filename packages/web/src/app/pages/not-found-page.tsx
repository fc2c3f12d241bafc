import { Link } from 'react-router';
import { useTitle } from '../use-title';

export function NotFoundPage() {
  useTitle('Not found');
  return (
    <div className="stack">
      <h1>Page not found</h1>
      <p>
        <Link to="/dashboard">Go to the fleet</Link>
      </p>
    </div>
  );
}
