import { useNavigate, useSearchParams } from 'react-router';
import { RegisterForm } from '../../features/auth/components/register-form';
import { SignInForm } from '../../features/auth/components/sign-in-form';
import { useTitle } from '../use-title';

/** Only paths inside the dashboard (with their query, e.g. the team) are followed after sign-in. */
export function safeNext(search: URLSearchParams): string {
  const next = search.get('next') ?? '';
  return /^\/dashboard(\/[\w\-/]*)?(\?[\w\-=&%.]*)?$/.test(next) && !/sign-in|register/.test(next)
    ? next
    : '/dashboard';
}

export function SignInPage() {
  useTitle('Sign in');
  const [search] = useSearchParams();
  const navigate = useNavigate();
  return (
    <div className="auth-page">
      <SignInForm
        onSignedIn={() => navigate(safeNext(search), { replace: true })}
        next={safeNext(search)}
        ssoError={search.get('sso_error')}
      />
    </div>
  );
}

export function RegisterPage() {
  useTitle('Create an account');
  const navigate = useNavigate();
  return (
    <div className="auth-page">
      <RegisterForm onRegistered={() => navigate('/dashboard/settings/billing?welcome=1', { replace: true })} />
    </div>
  );
}
