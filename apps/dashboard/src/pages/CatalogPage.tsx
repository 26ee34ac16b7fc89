import { Badge, Button, Group, Modal, Paper, Stack, Table, Text, TextInput } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useState, type FormEvent } from 'react';
import type { CatalogModel, CatalogNode } from '../api/contract';
import { useModels, useSaveModel } from '../api/operator-queries';
import { canEdit, useSession } from '../api/session';
import { ListTable } from '../components/ListTable';
import { MediaFields, ModalityBadges, useMediaForm } from '../components/ModelMedia';
import { PageTitle } from '../components/PageTitle';
import { EmptyState, ErrorAlert, QueryState } from '../components/QueryState';
import { formatCount, formatDzd } from '../format';

const PRICE = /^[0-9]{1,10}(\.[0-9]{1,6})?$/;
const TOKENS = /^[1-9][0-9]{0,6}$/;

function EditModel({ model, onDone }: { model: CatalogModel; onDone: () => void }) {
  const save = useSaveModel();
  const [input, setInput] = useState(String(model.input_price_dzd_per_m));
  const [output, setOutput] = useState(String(model.output_price_dzd_per_m));
  const [maxTokens, setMaxTokens] = useState(String(model.max_output_tokens));
  const media = useMediaForm(model);
  const valid = PRICE.test(input) && PRICE.test(output) && TOKENS.test(maxTokens) && media.valid;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!valid) return;
    const change = {
      input_price_dzd_per_m: Number(input),
      output_price_dzd_per_m: Number(output),
      max_output_tokens: Number(maxTokens),
      ...media.change,
    };
    save.mutate(
      { model, change },
      {
        onSuccess: () => {
          notifications.show({ color: 'teal', message: `${model.id} saved.` });
          onDone();
        },
      },
    );
  };
  const priceError = (value: string) => (PRICE.test(value) ? null : 'Up to 6 decimals');
  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        <TextInput
          label="Input price (DZD per million tokens)"
          inputMode="decimal"
          value={input}
          error={priceError(input)}
          onChange={(event) => setInput(event.currentTarget.value.trim())}
        />
        <TextInput
          label="Output price (DZD per million tokens)"
          inputMode="decimal"
          value={output}
          error={priceError(output)}
          onChange={(event) => setOutput(event.currentTarget.value.trim())}
        />
        <TextInput
          label="Max output tokens"
          inputMode="numeric"
          value={maxTokens}
          error={TOKENS.test(maxTokens) ? null : 'A whole number from 1'}
          onChange={(event) => setMaxTokens(event.currentTarget.value.trim())}
        />
        <MediaFields form={media} />
        <Text size="xs" c="dimmed">
          New prices and inputs apply to requests admitted from now on.
        </Text>
        <ErrorAlert error={save.error} />
        <Button type="submit" loading={save.isPending} disabled={!valid}>
          Save model
        </Button>
      </Stack>
    </form>
  );
}

const HEALTH_COLORS = { healthy: 'teal', down: 'red', unknown: 'gray' } as const;

function secondsAgo(iso: string): string {
  return `observed ${Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000))} s ago`;
}

function NodeLine({ node }: { node: CatalogNode }) {
  const health = node.health ?? 'unknown';
  return (
    <Group gap={6} wrap="nowrap" data-testid={`node-${node.url}`}>
      <Badge size="xs" variant="light" color={HEALTH_COLORS[health]} style={{ flexShrink: 0 }}>
        {health}
      </Badge>
      <Text fz="xs" style={{ wordBreak: 'break-all' }}>
        {node.url}
      </Text>
      {node.observed_at && (
        <Text fz="xs" c="dimmed" title={node.last_error_kind ?? undefined}>
          {secondsAgo(node.observed_at)}
        </Text>
      )}
    </Group>
  );
}

function Nodes({ model }: { model: CatalogModel }) {
  if (model.provider === 'external') return <>External provider</>;
  if (!model.nodes?.length) return <>No nodes</>;
  return (
    <Stack gap={4}>
      {model.nodes.map((node) => (
        <NodeLine key={node.url} node={node} />
      ))}
    </Stack>
  );
}

export function CatalogPage() {
  const models = useModels();
  const canWrite = canEdit(useSession().data);
  const [editing, setEditing] = useState<CatalogModel | null>(null);
  const headers = ['Model', 'Kind', 'Inputs', 'Input / M', 'Output / M', 'Max output', 'Nodes'];
  return (
    <>
      <PageTitle
        title="Catalog"
        description={
          canWrite
            ? 'Models, the inputs they accept, their prices (DZD per million tokens) and nodes.'
            : 'Models, their inputs, prices and nodes. Your role reads only.'
        }
      />
      <Paper withBorder radius="md">
        <QueryState query={models}>
          {({ data }) =>
            data.length === 0 ? (
              <EmptyState title="No models">
                Add models with gatewayctl or the operator API.
              </EmptyState>
            ) : (
              <ListTable headers={canWrite ? [...headers, ''] : headers} minWidthPx={980}>
                {data.map((model) => (
                  <Table.Tr key={model.id} data-testid={`model-${model.id}`}>
                    <Table.Td fw={600}>{model.id}</Table.Td>
                    <Table.Td>
                      <Badge variant="light">{model.kind}</Badge>
                    </Table.Td>
                    <Table.Td>
                      <ModalityBadges model={model} />
                    </Table.Td>
                    <Table.Td>{formatDzd(model.input_price_dzd_per_m)}</Table.Td>
                    <Table.Td>{formatDzd(model.output_price_dzd_per_m)}</Table.Td>
                    <Table.Td>{formatCount(model.max_output_tokens)}</Table.Td>
                    <Table.Td fz="xs">
                      <Nodes model={model} />
                    </Table.Td>
                    {canWrite && (
                      <Table.Td>
                        <Button size="xs" variant="default" onClick={() => setEditing(model)}>
                          Edit
                        </Button>
                      </Table.Td>
                    )}
                  </Table.Tr>
                ))}
              </ListTable>
            )
          }
        </QueryState>
      </Paper>
      <Modal
        opened={editing !== null}
        onClose={() => setEditing(null)}
        title={editing === null ? '' : `Edit ${editing.id}`}
      >
        {editing !== null && <EditModel model={editing} onDone={() => setEditing(null)} />}
      </Modal>
    </>
  );
}
