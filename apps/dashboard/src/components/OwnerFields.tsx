import { SegmentedControl, TextInput } from '@mantine/core';

/** Whose setting a form names (a budget's, a rate limit's): an API key or a scoped token. */
export type OwnerKind = 'api_key' | 'scoped_token';

const NAME_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

/** A key name or token id of the right shape (billing answers whether it exists: 404). */
export const ownerValid = (kind: OwnerKind, owner: string): boolean =>
  (kind === 'api_key' ? NAME_PATTERN : TOKEN_PATTERN).test(owner);

/**
 * The owner picker of the operators' dialogs: key or token, then its name or id as text (the
 * account page does not list the account's keys or tokens).
 */
export function OwnerFields({
  label,
  kind,
  owner,
  onKind,
  onOwner,
}: {
  /** What the picker is for, for assistive technology: "Budget of", "Rate limit of". */
  label: string;
  kind: OwnerKind;
  owner: string;
  onKind: (kind: OwnerKind) => void;
  onOwner: (owner: string) => void;
}) {
  return (
    <>
      <SegmentedControl
        aria-label={label}
        value={kind}
        onChange={(value) => onKind(value as OwnerKind)}
        data={[
          { value: 'api_key', label: 'API key' },
          { value: 'scoped_token', label: 'Scoped token' },
        ]}
      />
      <TextInput
        label={kind === 'api_key' ? 'Key name' : 'Token id'}
        placeholder={kind === 'api_key' ? 'main' : 'tok_…'}
        value={owner}
        onChange={(event) => onOwner(event.currentTarget.value.trim())}
      />
    </>
  );
}
