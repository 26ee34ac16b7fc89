import { Alert, Button, Code, CopyButton, Stack, Text } from '@mantine/core';

/** A raw key or link shown once, with a copy button: it cannot be displayed again. */
export function SecretOnce({ label, value }: { label: string; value: string }) {
  return (
    <Stack gap="sm">
      <Alert color="yellow" title="Copy it now">
        This {label} is shown only once. Store it somewhere safe: nobody can display it again.
      </Alert>
      <Code block data-testid="secret-value" style={{ wordBreak: 'break-all' }}>
        {value}
      </Code>
      <CopyButton value={value}>
        {({ copied, copy }) => (
          <Button onClick={copy} color={copied ? 'teal' : 'blue'} variant="light">
            {copied ? 'Copied' : `Copy ${label}`}
          </Button>
        )}
      </CopyButton>
      <Text size="xs" c="dimmed">
        Close this window once you have stored it.
      </Text>
    </Stack>
  );
}
