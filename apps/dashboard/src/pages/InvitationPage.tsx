import { Alert, Button, PasswordInput, Stack } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { DASHBOARD_LIMITS } from '../api/contract';
import { useAcceptInvitation } from '../api/session';
import { AuthCard } from '../components/AuthCard';
import { ErrorAlert } from '../components/QueryState';

/**
 * The invitation token travels in the URL's fragment (never sent to a server, never in access
 * logs or Referer). It is read once and removed from the address bar and history.
 */
function takeToken(): string {
  const token = new URLSearchParams(window.location.hash.slice(1)).get('token') ?? '';
  if (token !== '') window.history.replaceState(window.history.state, '', window.location.pathname);
  return token;
}

function passwordProblem(password: string, confirmation: string): string | null {
  if (password.length < DASHBOARD_LIMITS.passwordMinLength) {
    return `At least ${DASHBOARD_LIMITS.passwordMinLength} characters.`;
  }
  if (password.length > DASHBOARD_LIMITS.passwordMaxLength) return 'That password is too long.';
  if (confirmation !== '' && confirmation !== password) return 'The two passwords differ.';
  return null;
}

export function InvitationPage() {
  const [token] = useState(takeToken);
  const [password, setPassword] = useState('');
  const [confirmation, setConfirmation] = useState('');
  const [touched, setTouched] = useState(false);
  const accept = useAcceptInvitation();
  const navigate = useNavigate();
  const problem = passwordProblem(password, confirmation);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setTouched(true);
    if (problem !== null || confirmation !== password) return;
    accept.mutate({ token, password }, { onSuccess: () => void navigate('/', { replace: true }) });
  };
  if (token === '') {
    return (
      <AuthCard title="Invitation" subtitle="Set the password of your dashboard account.">
        <Alert color="red" role="alert">
          This page needs the full invitation link you received. Open the link again, or ask your
          operator for a new one.
        </Alert>
        <Button component={Link} to="/signin" variant="default">
          Go to sign-in
        </Button>
      </AuthCard>
    );
  }
  return (
    <AuthCard title="Welcome" subtitle="Choose the password of your dashboard account.">
      <form onSubmit={submit} noValidate>
        <Stack gap="md">
          <PasswordInput
            label="New password"
            description={`At least ${DASHBOARD_LIMITS.passwordMinLength} characters.`}
            autoComplete="new-password"
            required
            value={password}
            error={touched ? problem : null}
            onChange={(event) => setPassword(event.currentTarget.value)}
          />
          <PasswordInput
            label="Repeat the password"
            autoComplete="new-password"
            required
            value={confirmation}
            onChange={(event) => setConfirmation(event.currentTarget.value)}
          />
          <ErrorAlert error={accept.error} />
          <Button type="submit" loading={accept.isPending}>
            Set password and sign in
          </Button>
        </Stack>
      </form>
    </AuthCard>
  );
}
