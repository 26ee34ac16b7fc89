import { Button, Stack, Text, TextInput } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import type { RateLimitTarget } from '../api/key-limit-queries';
import { KEY_RATE_LIMITS, type KeyRateLimitPutRequest } from '../api/contract';
import { ErrorAlert } from './QueryState';
import { OwnerFields, ownerValid } from './OwnerFields';

const COUNT_PATTERN = /^[1-9][0-9]{0,10}$/;

export interface RateLimitFormValues {
  target: RateLimitTarget;
  body: KeyRateLimitPutRequest;
}

/** The limits' owner: known, or (operators) to be named. */
export type RateLimitTargetDraft = Omit<RateLimitTarget, 'owner' | 'kind'> &
  Partial<Pick<RateLimitTarget, 'owner' | 'kind'>>;

interface Props {
  target: RateLimitTargetDraft;
  initial?: { requestsPerMinute: string; tokensPerMinute: string };
  pending: boolean;
  error: unknown;
  onSubmit: (values: RateLimitFormValues) => void;
}

/** '' (no limit of its own), or a whole number from 1 to `max`. */
const countValid = (value: string, max: number) =>
  value === '' || (COUNT_PATTERN.test(value) && Number(value) <= max);

const countOf = (value: string): number | null => (value === '' ? null : Number(value));

/**
 * A key's or token's requests and tokens per minute; an empty field is no limit of its own
 * (saving replaces both, as the API does). The account's limit applies in any case.
 */
export function RateLimitForm({ target, initial, pending, error, onSubmit }: Props) {
  const [kind, setKind] = useState<RateLimitTarget['kind']>(target.kind ?? 'api_key');
  const [owner, setOwner] = useState(target.owner ?? '');
  const [rpm, setRpm] = useState(initial?.requestsPerMinute ?? '');
  const [tpm, setTpm] = useState(initial?.tokensPerMinute ?? '');
  const validOwner = ownerValid(kind, owner);
  const rpmValid = countValid(rpm, KEY_RATE_LIMITS.requestsPerMinuteMax);
  const tpmValid = countValid(tpm, KEY_RATE_LIMITS.tokensPerMinuteMax);
  // Both empty is a removal: the Remove button says so more plainly.
  const valid = validOwner && rpmValid && tpmValid && (rpm !== '' || tpm !== '');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!valid) return;
    onSubmit({
      target: { account: target.account, kind, owner },
      body: { requests_per_minute: countOf(rpm), tokens_per_minute: countOf(tpm) },
    });
  };
  const range = (max: number) => `A whole number from 1 to ${max.toLocaleString('en-US')}`;
  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        {target.owner === undefined && (
          <OwnerFields
            label="Rate limit of"
            kind={kind}
            owner={owner}
            onKind={setKind}
            onOwner={setOwner}
          />
        )}
        <TextInput
          label="Requests per minute"
          inputMode="numeric"
          placeholder="No limit of its own"
          data-autofocus
          value={rpm}
          error={rpmValid ? null : range(KEY_RATE_LIMITS.requestsPerMinuteMax)}
          onChange={(event) => setRpm(event.currentTarget.value.trim())}
        />
        <TextInput
          label="Tokens per minute"
          description="The prompt plus the output a request may produce; what it did not use comes back."
          inputMode="numeric"
          placeholder="No limit of its own"
          value={tpm}
          error={tpmValid ? null : range(KEY_RATE_LIMITS.tokensPerMinuteMax)}
          onChange={(event) => setTpm(event.currentTarget.value.trim())}
        />
        <Text size="xs" c="dimmed">
          Leave a field empty for no limit of its own. The account&apos;s requests per minute always
          applies too.
        </Text>
        <ErrorAlert error={error} />
        <Button type="submit" loading={pending} disabled={!valid}>
          Save rate limit
        </Button>
      </Stack>
    </form>
  );
}
