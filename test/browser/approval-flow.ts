// EXTENSIONS 7 in the browser: an agent's write from its 202, through the
// console's approvals inbox (the count in the sidebar, the preview and its
// effects beside the current order, approve with a reason), to its
// execution when the agent repeats the request with Merx-Approval, and the
// request log that shows it, linking to the event it committed. Used by
// test/console-browser.test.ts and scripts/screenshots.ts.
import path from 'node:path';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { http, operator } from '../helpers/harness.ts';

export interface ApprovalFlowOptions {
  browser: Browser;
  baseUrl: string;
  adminToken: string;
  shotsDir: string;
}

const WAIT = { timeout: 20_000 };

export async function runApprovalFlow(options: ApprovalFlowOptions) {
  const op = operator(options.baseUrl);
  const account = await op.createAccount({ name: 'Agent Shop' });
  const order = await op.checkout(account.id);
  const screenshots: string[] = [];
  const context = await options.browser.newContext({ viewport: { width: 1440, height: 900 }, baseURL: options.baseUrl });
  const page = await context.newPage();
  const shot = async (name: string) => {
    const file = path.join(options.shotsDir, `${name}.png`);
    await page.waitForLoadState('networkidle').catch(() => {});
    await page.screenshot({ path: file, fullPage: false });
    screenshots.push(file);
  };
  try {
    await page.goto('/admin');
    await page.getByLabel('Operator token').fill(options.adminToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Accounts', exact: true }).waitFor(WAIT);

    // The operator issues the agent's key with the approval option.
    await page.goto(`/admin/accounts/${account.id}/keys`);
    await page.getByRole('form', { name: 'Issue a key' }).getByLabel('Name').fill('claude');
    await page.getByLabel('Writes').selectOption('approval');
    await page.getByRole('button', { name: 'Issue key' }).click();
    const agentKey = (await page.getByTestId('issued-key').textContent({ timeout: WAIT.timeout }))!.trim();
    await page.getByRole('button', { name: 'I have stored it' }).click();

    // The agent asks to ship the order: 202, nothing happens yet.
    const asked = await http(options.baseUrl, 'PATCH', `/api/v1/orders/${order.id}`, {
      token: agentKey,
      body: { status: 'shipped', tracking_number: 'TRK-AGENT-1', courier: 'courier_a' },
    });
    assert.equal(asked.status, 202, asked.text);
    const approvalId = asked.body.data.id as string;

    // The inbox: the count in the sidebar, the preview and effects beside the current order.
    await page.goto(`/admin/accounts/${account.id}/orders`);
    await page.getByTestId('pending-approvals').filter({ hasText: '1' }).waitFor(WAIT);
    await page.getByRole('link', { name: /Approvals, 1 pending/ }).click();
    await page.getByRole('table', { name: 'Approvals' }).getByText('update_order').click();
    await page.getByRole('list', { name: 'Effects' }).getByText('email to the customer').waitFor(WAIT);
    await page.getByRole('region', { name: 'Approval' }).getByText('TRK-AGENT-1').first().waitFor(WAIT);
    await shot('approval-inbox');
    await page.getByLabel('Reason').fill('tracking number checked');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByTestId('pending-approvals').filter({ hasText: '0' }).waitFor(WAIT);

    // The agent repeats its request with the approval: it runs once.
    const ran = await http(options.baseUrl, 'PATCH', `/api/v1/orders/${order.id}`, {
      token: agentKey,
      body: { status: 'shipped', tracking_number: 'TRK-AGENT-1', courier: 'courier_a' },
      headers: { 'Merx-Approval': approvalId },
    });
    assert.equal(ran.status, 200, ran.text);

    // The inbox shows it executed; the request log shows the 202 and the 200, linking to the event.
    await page.getByLabel('Approval status').selectOption('executed');
    await page.getByRole('table', { name: 'Approvals' }).getByText('executed').waitFor(WAIT);
    await page.goto(`/admin/accounts/${account.id}/requests?key_prefix=${agentKey.slice(0, 11)}`);
    const log = page.getByRole('table', { name: 'Request log' });
    await log.getByText('202').waitFor(WAIT);
    await log.getByText(/^200$/).waitFor(WAIT);
    await shot('request-log');
    await log.locator('a').first().click();
    await page.getByRole('region', { name: 'Event' }).getByText(/order\.(status_changed|updated)/).first().waitFor(WAIT);
    return { accountId: account.id, orderId: order.id, approvalId, agentKey, screenshots };
  } catch (err) {
    await page.screenshot({ path: path.join(options.shotsDir, 'failure-approval.png') }).catch(() => {});
    throw err;
  } finally {
    await context.close();
  }
}
