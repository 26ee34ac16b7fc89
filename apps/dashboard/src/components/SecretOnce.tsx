import { Alert, Button, Code, CopyButton, Modal, Stack } from '@mantine/core';

/** A raw key or link shown once, with a copy button (webhook secrets can be revealed again: `notice`). */
export function SecretOnce({
  label,
  value,
  onDone,
  notice,
}: {
  label: string;
  value: string;
  onDone?: () => void;
  /** Replaces the "shown only once" text (a secret that can be revealed again). */
  notice?: string;
}) {
  return (
    <Stack gap="sm">
      <Alert color="yellow" title="Copy it now">
        {notice ??
          `This ${label} is shown only once. Store it somewhere safe: nobody can display it again.`}
      </Alert>
      <Code
        block
        data-testid="secret-value"
        style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-all' }}
      >
        {value}
      </Code>
      <CopyButton value={value}>
        {({ copied, copy }) => (
          <Button onClick={copy} color={copied ? 'teal' : 'blue'} variant="light">
            {copied ? 'Copied' : `Copy ${label}`}
          </Button>
        )}
      </CopyButton>
      {onDone !== undefined && (
        <Button variant="default" onClick={onDone}>
          Done, I stored it
        </Button>
      )}
    </Stack>
  );
}

/** The "shown once" dialog: closes only by its button or the close icon, never by a stray click. */
export function SecretOnceModal({
  title,
  label,
  value,
  onClose,
}: {
  title: string;
  label: string;
  value: string | null;
  onClose: () => void;
}) {
  return (
    <Modal opened={value !== null} onClose={onClose} title={title} closeOnClickOutside={false}>
      {value !== null && <SecretOnce label={label} value={value} onDone={onClose} />}
    </Modal>
  );
}
