import { Button, Modal, Stack, TextInput } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { segment, useCreateAccount } from '../api/queries';
import { ErrorAlert } from './QueryState';

/** Creates an account by name, then opens it, where its owner is invited (role `operator`). */
export function NewAccount() {
  const [opened, setOpened] = useState(false);
  const [name, setName] = useState('');
  const create = useCreateAccount();
  const navigate = useNavigate();
  const valid = name.trim().length > 0 && name.trim().length <= 200;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!valid) return;
    create.mutate(name.trim(), {
      onSuccess: (account) => void navigate(`/operator/accounts/${segment(account.id)}`),
    });
  };
  return (
    <>
      <Button onClick={() => setOpened(true)}>New account</Button>
      <Modal opened={opened} onClose={() => setOpened(false)} title="New account">
        <form onSubmit={submit} noValidate>
          <Stack gap="md">
            <TextInput
              label="Account name"
              description="The customer's name, up to 200 characters; invite its owner next."
              data-autofocus
              maxLength={200}
              value={name}
              onChange={(event) => setName(event.currentTarget.value)}
            />
            <ErrorAlert error={create.error} />
            <Button type="submit" loading={create.isPending} disabled={!valid}>
              Create account
            </Button>
          </Stack>
        </form>
      </Modal>
    </>
  );
}
