import { TextInput } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useState } from 'react';
import { DateRangeInputs, toRange, useDayRange } from '../components/DateRange';
import { PageTitle } from '../components/PageTitle';
import { UsageSections } from './UsagePage';

/** Usage across every account (both operator roles read it), or one account's by exact id. */
export function OperatorUsagePage() {
  const [days, setDays] = useDayRange(30);
  const [search, setSearch] = useState('');
  const [account] = useDebouncedValue(search.trim(), 300);
  return (
    <>
      <PageTitle
        title="Usage"
        description="Requests of every account, per day, model and key, and the request log."
        action={<DateRangeInputs value={days} onChange={setDays} />}
      />
      <TextInput
        aria-label="Filter by account id"
        placeholder="Account id (all accounts when empty)"
        value={search}
        onChange={(event) => setSearch(event.currentTarget.value)}
        maw={420}
        mb="md"
      />
      <UsageSections range={toRange(days)} scope={{ whose: 'operator', account }} />
    </>
  );
}
