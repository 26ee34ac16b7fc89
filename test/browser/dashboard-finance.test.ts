import { describe, expect, it } from '@jest/globals';
import { CHAT_MODEL } from '../abuse/abuse-stack.js';
import { monthIn, previousMonthIn } from '@gateway/contracts';
import { waitFor } from '@gateway/testing';
import { screenshots } from './browser.js';
import {
  chat,
  download,
  open,
  operatorViewer,
  probe,
  useDashboardStack,
} from './dashboard-harness.js';

/*
 * Finance's page in Chromium against the real stack: this month's report (checks, the
 * liability roll-forward, revenue by model), its CSV, a month that has not ended (no close), an
 * ended month closed by the finance role, and an operator who reads but cannot close.
 */

const { stack } = useDashboardStack();

/**
 * This month where the report counts it: billing's `REPORT_TIME_ZONE` (Africa/Algiers by default,
 * as the stack runs it). In UTC, the last hour of a month is already the next month there, and
 * the month's report would not show the requests just made.
 */
const REPORT_TIME_ZONE = 'Africa/Algiers';
const thisMonth = () => monthIn(REPORT_TIME_ZONE, new Date());

describe('dashboard finance page', () => {
  it('shows the month’s report and CSV; finance closes an ended month, operators cannot', async () => {
    await chat(stack().apiKey);
    await chat(stack().apiKey);
    const page = await operatorViewer('closer@gateway.test', 'finance');
    await open(page, 'Finance');
    // It opens on the month finance closes next, as the business's zone counts months.
    await expect(page.getByLabel('Month').inputValue()).resolves.toBe(
      previousMonthIn(REPORT_TIME_ZONE, new Date()),
    );
    await page.getByLabel('Month').fill(thisMonth());
    await waitFor(
      async () => {
        const rows = await page.getByTestId('revenue-model-row').allTextContents();
        return rows.some((row) => row.includes(CHAT_MODEL)) || undefined;
      },
      15_000,
      'revenue of the chat model',
    );
    await expect(page.getByTestId('report-checks').textContent()).resolves.toBe(
      'Every identity holds',
    );
    await page.getByTestId('rollforward-total').waitFor();
    await expect(
      page.getByRole('button', { name: `Close ${thisMonth()}` }).isDisabled(),
    ).resolves.toBe(true);
    await screenshots(page, 'finance');
    const csv = (await download(page, 'Revenue CSV')).trim().split('\r\n');
    expect(csv[0]).toBe(
      'day,model,tier,settlements,refunds,charged_micro_dzd,refunded_micro_dzd,net_micro_dzd',
    );
    expect(csv.slice(1).join('\n')).toContain(CHAT_MODEL);

    // January has ended: finance closes it once.
    await page.getByLabel('Month').fill('2026-01');
    await page.getByRole('button', { name: 'Close 2026-01' }).click();
    await expect(page.getByTestId('period-closed').textContent()).resolves.toContain(
      'Closed by closer@gateway.test',
    );

    const operator = await operatorViewer('ops-reader@gateway.test', 'operator');
    await open(operator, 'Finance');
    await operator.getByLabel('Month').fill('2026-02');
    await operator.getByText('The finance role closes a period').waitFor();
    await expect(operator.getByRole('button', { name: 'Close 2026-02' }).count()).resolves.toBe(0);
    const refused = await probe(
      operator,
      'POST',
      '/dashboard/api/finance/periods/2026-02/close',
      {},
    );
    expect(refused.status).toBe(403);
  });
});
