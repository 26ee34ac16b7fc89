import { Group, TextInput } from '@mantine/core';
import { useState } from 'react';
import { localDay, startOfLocalDay } from '../format';
import type { Range } from '../api/owner-queries';

const DAY_MS = 86_400_000;

export interface DayRange {
  fromDay: string;
  toDay: string;
}

/** The last `days` days, today included, in the viewer's zone. */
const lastDays = (days: number): DayRange => ({
  fromDay: localDay(new Date(Date.now() - (days - 1) * DAY_MS)),
  toDay: localDay(new Date()),
});

/** Whole local days, `to` included: `[from 00:00, the day after to 00:00)` for the API. */
export function toRange({ fromDay, toDay }: DayRange): Range {
  const next = new Date(`${toDay}T00:00:00`);
  next.setDate(next.getDate() + 1);
  return { from: startOfLocalDay(fromDay), to: next.toISOString() };
}

export function useDayRange(days: number) {
  return useState<DayRange>(() => lastDays(days));
}

/** Two native date pickers (from, to); an impossible pair is not passed on. */
export function DateRangeInputs({
  value,
  onChange,
}: {
  value: DayRange;
  onChange: (range: DayRange) => void;
}) {
  const set = (change: Partial<DayRange>) => {
    const next = { ...value, ...change };
    if (next.fromDay !== '' && next.toDay !== '' && next.fromDay <= next.toDay) onChange(next);
  };
  return (
    <Group gap="xs" wrap="nowrap">
      <TextInput
        type="date"
        label="From"
        value={value.fromDay}
        max={value.toDay}
        onChange={(event) => set({ fromDay: event.currentTarget.value })}
      />
      <TextInput
        type="date"
        label="To"
        value={value.toDay}
        min={value.fromDay}
        onChange={(event) => set({ toDay: event.currentTarget.value })}
      />
    </Group>
  );
}
