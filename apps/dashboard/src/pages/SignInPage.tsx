import { Button, PasswordInput, SegmentedControl, Stack, TextInput } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { homePath, useSignIn, type SignIn } from '../api/session';
import { AuthCard } from '../components/AuthCard';
import { ErrorAlert } from '../components/QueryState';

export function SignInPage() {
  const [form, setForm] = useState<SignIn>({ email: '', password: '', realm: 'owner' });
  const signIn = useSignIn();
  const navigate = useNavigate();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    signIn.mutate(form, {
      onSuccess: (session) => void navigate(homePath(session), { replace: true }),
    });
  };
  return (
    <AuthCard title="Sign in" subtitle="Manage your API keys, balance and usage.">
      <form onSubmit={submit} noValidate>
        <Stack gap="md">
          <SegmentedControl
            fullWidth
            value={form.realm}
            onChange={(realm) => setForm({ ...form, realm: realm as SignIn['realm'] })}
            data={[
              { value: 'owner', label: 'Account owner' },
              { value: 'operator', label: 'Operator' },
            ]}
          />
          <TextInput
            label="Email"
            type="email"
            autoComplete="username"
            required
            value={form.email}
            onChange={(event) => setForm({ ...form, email: event.currentTarget.value })}
          />
          <PasswordInput
            label="Password"
            autoComplete="current-password"
            required
            value={form.password}
            onChange={(event) => setForm({ ...form, password: event.currentTarget.value })}
          />
          <ErrorAlert error={signIn.error} />
          <Button
            type="submit"
            loading={signIn.isPending}
            disabled={form.email === '' || form.password === ''}
          >
            Sign in
          </Button>
        </Stack>
      </form>
    </AuthCard>
  );
}
