// EXTENSIONS 7 in the browser: an agent's write from its 202, through the
// console's approvals inbox (the count in the sidebar, the change in words,
// the diff with the order and the key by name, the effects, approve with a
// reason), to its execution when the agent repeats the request with
// Merx-Approval; a second ask whose order changed meanwhile, warned and
// rejected; and the request log that shows it, linking to the event it committed. Used by
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

    // The inbox: the count in the sidebar; the row says the change in words, with the order's number and customer.
    const label = `Order ${order.number} · ${order.customer.name}`;
    await page.goto(`/admin/accounts/${account.id}/orders`);
    await page.getByTestId('pending-approvals').filter({ hasText: /^1$/ }).waitFor(WAIT);
    await page.getByRole('link', { name: /Approvals, 1 pending/ }).click();
    const inbox = page.getByRole('table', { name: 'Approvals' });
    await inbox.getByText(`${label}:`).waitFor(WAIT);
    await inbox.getByText(`status ${order.status} → shipped`, { exact: false }).waitFor(WAIT);
    await inbox.getByText('claude', { exact: true }).waitFor(WAIT);
    await inbox.getByText('update_order').click();
    // Issue 41: judged in five seconds: the diff, the order, the key by name, the effects; the JSON only on request.
    const screen = page.getByRole('region', { name: 'Approval' });
    await screen.getByRole('heading', { name: new RegExp(`Update order · ${label}`) }).waitFor(WAIT);
    await screen.getByText('claude', { exact: true }).waitFor(WAIT);
    const diff = screen.getByRole('table', { name: 'What changes' });
    const statusRow = diff.getByRole('row', { name: /^status/ });
    assert.equal((await statusRow.locator('td.before').innerText()).trim(), order.status);
    assert.match(await statusRow.locator('td.after').innerText(), /shipped/);
    assert.match(await diff.getByRole('row', { name: /^tracking number/ }).innerText(), /—\s+→ TRK-AGENT-1/);
    await screen.getByRole('list', { name: 'Effects' }).getByText('email to the customer').waitFor(WAIT);
    assert.equal(await screen.getByRole('alert', { name: 'Changed since asked' }).count(), 0, 'the order is as it was asked');
    assert.equal(await screen.locator('pre.json').first().isVisible(), false, 'the JSON waits behind its toggle');
    await shot('approval-inbox');
    await screen.getByText(/^JSON: the request/).click();
    await screen.locator('pre.json', { hasText: 'TRK-AGENT-1' }).first().waitFor(WAIT);
    await page.getByLabel('Reason').fill('tracking number checked');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByTestId('pending-approvals').filter({ hasText: /^0$/ }).waitFor(WAIT);

    // The agent repeats its request with the approval: it runs once.
    const ran = await http(options.baseUrl, 'PATCH', `/api/v1/orders/${order.id}`, {
      token: agentKey,
      body: { status: 'shipped', tracking_number: 'TRK-AGENT-1', courier: 'courier_a' },
      headers: { 'Merx-Approval': approvalId },
    });
    assert.equal(ran.status, 200, ran.text);

    // The inbox shows it executed.
    await page.getByLabel('Approval status').selectOption('executed');
    await page.getByRole('table', { name: 'Approvals' }).getByText('executed').waitFor(WAIT);

    // Issue 41: the agent asks again; the merchant changes the order meanwhile: the screen warns that approving would fail.
    const again = await http(options.baseUrl, 'PATCH', `/api/v1/orders/${order.id}`, {
      token: agentKey,
      body: { admin_notes: 'agent: customer asked for evening delivery' },
    });
    assert.equal(again.status, 202, again.text);
    await op.call('POST', `/accounts/${account.id}/operations/update_order`, {
      arguments: { id: order.id, admin_notes: 'merchant: called the customer' },
    });
    await page.getByLabel('Approval status').selectOption('pending');
    await inbox.getByText('changed since asked').waitFor(WAIT);
    await inbox.getByText('update_order').click();
    const warning = screen.getByRole('alert', { name: 'Changed since asked' });
    await warning.waitFor(WAIT);
    assert.match(await warning.innerText(), /changed after the agent asked \(admin notes\)[^]*412/);
    assert.match(await diff.getByRole('row', { name: /^admin notes/ }).innerText(), /→ agent: customer asked for evening delivery/);
    await shot('approval-stale');
    await screen.getByRole('button', { name: 'Reject' }).click();
    await page.getByTestId('pending-approvals').filter({ hasText: /^0$/ }).waitFor(WAIT);
    const stale = await http(options.baseUrl, 'GET', `/api/v1/approvals/${again.body.data.id}`, { token: agentKey });
    assert.equal(stale.body.data.status, 'rejected');

    // The request log shows the 202 and the 200, linking to the event.
    await page.goto(`/admin/accounts/${account.id}/requests?key_prefix=${agentKey.slice(0, 11)}`);
    const log = page.getByRole('table', { name: 'Request log' });
    await log.getByText('202').first().waitFor(WAIT);
    await log.getByText(/^200$/).first().waitFor(WAIT);
    await shot('request-log');
    await log.locator('a').first().click();
    await page
      .getByRole('region', { name: 'Event' })
      .getByText(/order\.(status_changed|updated)/)
      .first()
      .waitFor(WAIT);
    return { accountId: account.id, orderId: order.id, approvalId, agentKey, screenshots };
  } catch (err) {
    await page.screenshot({ path: path.join(options.shotsDir, 'failure-approval.png') }).catch(() => {});
    throw err;
  } finally {
    await context.close();
  }
}
