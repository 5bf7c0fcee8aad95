// Issue 41: the docs as a reader sees them, at 1440 and 390 px: guides are
// documentation pages (no Redoc, no download button, no dark panel, code that
// wraps), the references one Redoc page per API, one bar that fits and one
// search that reaches guides, operations, webhooks and MCP tools. Used by
// test/docs-browser.test.ts and by npm run screenshots.
import assert from 'node:assert/strict';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';

export interface DocsWalk {
  browser: Browser;
  baseUrl: string;
  shotsDir: string;
}

const GUIDES = ['getting-started', 'webhooks', 'integrator-safety', 'mcp', 'operations', 'operator-console', 'contract'];
const REFERENCES = ['/docs', '/docs/mcp', '/admin/docs'];

/** What overflows sideways: the page itself, and any code block or bar link past the right edge. */
async function overflow(page: Page) {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const wide = [...document.querySelectorAll('article pre')].filter((pre) => pre.scrollWidth > pre.clientWidth + 1).length;
    const outside = [...document.querySelectorAll('.bar a, .bar input')]
      .filter((el) => el.getBoundingClientRect().right > width + 0.5)
      .map((el) => el.textContent || 'search');
    return {
      page: document.documentElement.scrollWidth - width,
      wideCode: wide,
      outside,
      bar: document.querySelector('.bar')!.getBoundingClientRect().height,
    };
  });
}

async function search(page: Page, words: string) {
  await page.fill('#docs-search', words);
  await page.locator('#docs-results a').first().waitFor();
  return page.$$eval('#docs-results a', (links) => links.map((a) => a.getAttribute('href')!));
}

/** The heading nearest the top of the window, once the page has moved there. */
async function headingInView(page: Page, text: string) {
  await page.waitForFunction(
    (wanted) =>
      [...document.querySelectorAll('h1, h2, h3')].some((h) => {
        const top = h.getBoundingClientRect().top;
        return h.textContent.includes(wanted) && top >= 0 && top < 300;
      }),
    text,
    { timeout: 30_000 },
  );
}

export async function walkDocs({ browser, baseUrl, shotsDir }: DocsWalk): Promise<string[]> {
  const screenshots: string[] = [];
  const foreign: string[] = [];
  const errors: string[] = [];
  for (const width of [1440, 390]) {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    const page = await context.newPage();
    page.on('response', (r) => {
      if (!r.url().startsWith(baseUrl) && !r.url().startsWith(`blob:${baseUrl}`)) foreign.push(r.url());
    });
    page.on('pageerror', (err) => errors.push(err.message));
    try {
      for (const slug of GUIDES) {
        await page.goto(`${baseUrl}/docs/guides/${slug}`);
        await page.locator('article h1').waitFor();
        const seen = await overflow(page);
        assert.deepEqual(
          { ...seen, bar: undefined },
          { page: 0, wideCode: 0, outside: [], bar: undefined },
          `${slug} at ${width} px: nothing sideways`,
        );
        if (width === 1440) assert.ok(seen.bar < 60, `${slug}: the bar is one row at 1440 px (${seen.bar})`);
        assert.equal(await page.locator('.api-content, .redoc-wrap').count(), 0, `${slug}: no Redoc frame (its dark panel)`);
        assert.equal(await page.getByText('Download OpenAPI').count(), 0, `${slug}: no OpenAPI download on a guide`);
        assert.doesNotMatch(await page.locator('article h1').innerText(), /\(\d+\.\d+\.\d+\)/, `${slug}: a title, not an API version`);
      }
      await page.goto(`${baseUrl}/docs/guides/getting-started`);
      screenshots.push(await shot(page, shotsDir, `docs-guide-${width}px.png`));
      for (const reference of REFERENCES) {
        await page.goto(`${baseUrl}${reference}`);
        await page.locator('.api-content').waitFor({ timeout: 30_000 });
        const seen = await overflow(page);
        assert.deepEqual(seen.outside, [], `${reference} at ${width} px: the bar fits`);
        assert.equal(seen.page, 0, `${reference} at ${width} px: nothing sideways`);
      }
      // One search, on every page: from a guide to a webhook operation of the reference, and from the reference to an MCP tool.
      await page.goto(`${baseUrl}/docs/guides/getting-started`);
      const found = await search(page, 'rotate webhook secret');
      assert.ok(found.includes('/docs#tag/Webhooks/operation/rotate_webhook_secret'), found.join(' '));
      assert.ok(
        found.some((url) => url.startsWith('/docs/guides/')),
        'and the guides that tell it',
      );
      if (width === 390) screenshots.push(await shot(page, shotsDir, 'docs-search-390px.png'));
      await page.locator('#docs-results a[href="/docs#tag/Webhooks/operation/rotate_webhook_secret"]').click();
      await headingInView(page, 'Rotate');
      if (width === 1440) screenshots.push(await shot(page, shotsDir, 'docs-reference.png'));
      assert.ok((await search(page, 'create_shipment')).includes('/docs/mcp#tool-create_shipment'));
      await page.locator('#docs-results a[href="/docs/mcp#tool-create_shipment"]').click();
      await headingInView(page, 'create_shipment');
      if (width === 1440)
        screenshots.push(
          await shot(page, shotsDir, 'docs-search.png', async () => {
            await page.fill('#docs-search', 'signature');
            await page.locator('#docs-results a').first().waitFor();
          }),
        );
    } finally {
      await context.close();
    }
  }
  assert.deepEqual(foreign, [], 'nothing was fetched from another host');
  assert.deepEqual(errors, []);
  return screenshots;
}

async function shot(page: Page, dir: string, name: string, before?: () => Promise<void>) {
  if (before) await before();
  const file = path.join(dir, name);
  await page.screenshot({ path: file });
  return file;
}
