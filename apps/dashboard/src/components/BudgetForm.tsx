import { Autocomplete, Button, Select, Stack, Text, TextInput } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import type { BudgetTarget } from '../api/budget-queries';
import {
  BUDGET_PERIODS,
  type BudgetPeriod,
  type BudgetPutRequest,
  type BudgetView,
} from '../api/contract';
import { ErrorAlert } from './QueryState';
import { OwnerFields, ownerValid } from './OwnerFields';

// Up to 6 decimals, like the API: the limit is sent as typed, never through a float.
const AMOUNT_PATTERN = /^[0-9]{1,10}(\.[0-9]{1,6})?$/;

const PERIOD_OPTIONS: Record<BudgetPeriod, string> = {
  day: 'Per day',
  week: 'Per week (from Monday)',
  month: 'Per calendar month',
  total: 'In total (never resets)',
};

/** The zones the browser knows (billing checks the name against PostgreSQL's database). */
const TIME_ZONES = [
  ...new Set([
    'UTC',
    ...(typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : []),
  ]),
];

export interface BudgetFormValues {
  target: BudgetTarget;
  body: BudgetPutRequest;
}

interface Props {
  /** The budget's owner; without `owner`, the form asks for it (operators). */
  target: Omit<BudgetTarget, 'owner' | 'kind'> & Partial<Pick<BudgetTarget, 'owner' | 'kind'>>;
  initial?: { limit: string; period: BudgetPeriod; timeZone: string };
  pending: boolean;
  error: unknown;
  onSubmit: (values: BudgetFormValues) => void;
}

/** A budget's limit (DZD), period and zone; a change starts a new window at once. */
export function BudgetForm({ target, initial, pending, error, onSubmit }: Props) {
  const [kind, setKind] = useState<BudgetTarget['kind']>(target.kind ?? 'api_key');
  const [owner, setOwner] = useState(target.owner ?? '');
  const [limit, setLimit] = useState(initial?.limit ?? '');
  const [period, setPeriod] = useState<BudgetPeriod>(initial?.period ?? 'month');
  const [timeZone, setTimeZone] = useState(initial?.timeZone ?? 'UTC');
  const validOwner = ownerValid(kind, owner);
  const limitValid = AMOUNT_PATTERN.test(limit) && /[1-9]/.test(limit);
  const valid = validOwner && limitValid && timeZone !== '';
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!valid) return;
    onSubmit({
      target: { account: target.account, kind, owner },
      body: { limit_dzd: limit, period, time_zone: timeZone },
    });
  };
  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        {target.owner === undefined && (
          <OwnerFields
            label="Budget of"
            kind={kind}
            owner={owner}
            onKind={setKind}
            onOwner={setOwner}
          />
        )}
        <TextInput
          label="Limit (DZD)"
          inputMode="decimal"
          placeholder="500.00"
          data-autofocus
          value={limit}
          error={limit !== '' && !limitValid ? 'More than 0, up to 6 decimals' : null}
          onChange={(event) => setLimit(event.currentTarget.value.trim())}
        />
        <Select
          label="Period"
          allowDeselect={false}
          value={period}
          onChange={(value) => value !== null && setPeriod(value as BudgetPeriod)}
          data={BUDGET_PERIODS.map((value) => ({ value, label: PERIOD_OPTIONS[value] }))}
        />
        <Autocomplete
          label="Time zone"
          description="Windows start at midnight there (IANA name)."
          disabled={period === 'total'}
          limit={20}
          data={TIME_ZONES}
          value={timeZone}
          onChange={(value) => setTimeZone(value.trim())}
        />
        <Text size="xs" c="dimmed">
          Saving a different limit, period or zone starts a new window now, with nothing spent.
        </Text>
        <ErrorAlert error={error} />
        <Button type="submit" loading={pending} disabled={!valid}>
          Save budget
        </Button>
      </Stack>
    </form>
  );
}

/** A budget's current values for the form: the limit as exact decimal text. */
export function budgetInitial(budget: BudgetView): NonNullable<Props['initial']> {
  const micro = BigInt(budget.limit_micro_dzd);
  const fraction = String(micro % 1_000_000n)
    .padStart(6, '0')
    .replace(/0+$/, '');
  const whole = String(micro / 1_000_000n);
  return {
    limit: fraction === '' ? whole : `${whole}.${fraction}`,
    period: budget.period,
    timeZone: budget.time_zone,
  };
}
