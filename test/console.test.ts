import { createServer } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePdf } from './helpers/documents';
import { RESOURCE, startOidcServer } from './helpers/oidc-server';
import { runScript, waitFor, type Started } from './helpers/processes';

/**
 * The console in a real browser (Debian's Chromium, driven by playwright-core) against `npm start`
 * with an in-memory store: every step goes through the page as a person would, and every page is
 * checked by axe-core. Screenshots go to $CONSOLE_SCREENSHOTS (`npm run console:screenshots` writes
 * docs/console/), else to a temporary folder.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
// CI installs Chromium (.ci/run); elsewhere the file is skipped, saying so, when it is missing.
const runnable = existsSync(CHROMIUM) || !!process.env.CI;
const shots = resolve(process.env.CONSOLE_SCREENSHOTS ?? mkdtempSync(join(tmpdir(), 'cairn-console-')));
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let server: Started;
let base = '';
let key = '';
let admin = '';
let browser: Browser;
let page: Page;
const orders = createServer((req, res) => {
  const id = (req.url ?? '').split('/').pop();
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ order: id, status: 'shipped', eta: '2026-11-25' }));
});
let ordersUrl = '';
const browserErrors: string[] = [];
/** The requests the API refused, to say which one when the browser logs an unexpected refusal. */
const refused: string[] = [];

async function axeProblems(): Promise<string[]> {
  await page.evaluate(AXE);
  // Expressions as strings: they run in the page, whose DOM types this Node program does not have.
  const results = await page.evaluate<{ violations: Array<{ id: string; impact: string; help: string; nodes: Array<{ target: string[] }> }> }>("axe.run(document, { resultTypes: ['violations'] })");
  return results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** Follows a link of the main navigation. */
const nav = (name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();

const LAPTOP = { width: 1280, height: 800 };
const SMALL_LAPTOP = { width: 1024, height: 640 };

/** axe-core finds nothing serious, and the page fits laptop screens without sideways scrolling. */
async function checkPage(name: string) {
  expect(await axeProblems(), `accessibility of ${name}`).toEqual([]);
  for (const size of [SMALL_LAPTOP, LAPTOP]) {
    await page.setViewportSize(size);
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect(overflow, `${name} scrolls sideways at ${size.width} px`).toBeLessThanOrEqual(0);
  }
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: false });
}

describe.skipIf(!runnable)('the console in Chromium', { timeout: 90_000 }, () => {
  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    await new Promise<void>((r) => orders.listen(0, '127.0.0.1', r));
    ordersUrl = `http://localhost:${(orders.address() as { port: number }).port}`;
    // The pages below make some hundred requests of the agents area within a minute or two, past the
    // free plan's 100 a minute: a 429 would fail a page for a reason these tests are not about (rate
    // limits have their own tests), so the dev key is on the pro plan here.
    server = runScript('local/server.ts', [], { PORT: '0', DATA_DIR: ':memory:', TOOL_ALLOWED_HOSTS: 'localhost', API_KEY_CACHE_SECONDS: '0', DEV_API_KEY_PLAN: 'pro' });
    await waitFor(() => /PLATFORM_ADMIN_TOKEN=\S+/.test(server.output()) || server.child.exitCode !== null, 'the server banner', 90_000);
    key = /DEV_API_KEY=(\S+)/.exec(server.output())?.[1] ?? '';
    admin = /PLATFORM_ADMIN_TOKEN=(\S+)/.exec(server.output())?.[1] ?? '';
    if (!key) throw new Error(`server did not start:\n${server.output()}`);
    base = `http://localhost:${/Cairn is running at http:\/\/localhost:(\d+)/.exec(server.output())![1]}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    page = await browser.newPage({ viewport: LAPTOP });
    page.on('pageerror', (e) => browserErrors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && browserErrors.push(m.text()));
    page.on('response', (r) => r.status() >= 400 && refused.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    server?.child.kill('SIGTERM');
    await server?.exited;
    await new Promise<void>((r) => orders.close(() => r()));
  });

  it('refuses a wrong key with the API’s words, signs in with the right one, and says what to do first', async () => {
    await page.goto(`${base}/console`);
    await page.getByLabel('API key').fill('cak_wrong');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/API key: .*(invalid|unknown|not)/i);
    await checkPage('sign-in');
    // By keyboard: Enter in the field submits.
    await page.getByLabel('API key').fill(key);
    await page.getByLabel('API key').press('Enter');
    await page.getByText('No agents yet').waitFor();
    // The first Tab reaches "Skip to content", which moves focus past the navigation.
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect(await page.evaluate('document.activeElement.id')).toBe('main');
    await checkPage('agents-empty');
    // Kept for the tab only.
    expect(await page.evaluate('[sessionStorage.length, localStorage.length, document.cookie]')).toEqual([1, 0, '']);
  });

  it('creates a file collection by upload, shows each file’s progress, follows it to ready, and searches it', async () => {
    await nav('Knowledge');
    await page.getByLabel('Name').fill('Help centre');
    await page.getByRole('button', { name: 'Create source' }).click();
    await page.getByRole('heading', { name: 'Help centre' }).waitFor();
    const pdf = await makePdf([
      { heading: 'Shipping', lines: ['Standard shipping takes 3 to 5 working days.', 'Express shipping arrives the next day.'] },
      { heading: 'Returns', lines: ['Items can be returned within 30 days of delivery.', 'Refunds are paid within 5 days of the return.'] },
    ]);
    // One file past the multipart limit goes to S3 by a presigned PUT from the browser.
    const large = Array.from({ length: 64_000 }, (_, i) => `Line ${i} of the warehouse log: parcel ${i * 7} scanned at dock ${i % 9}.`).join('\n');
    expect(large.length).toBeGreaterThan(4 * 1024 * 1024);
    // Two files chosen with the file picker…
    await page.locator('#file-input').setInputFiles([
      { name: 'policies.pdf', mimeType: 'application/pdf', buffer: Buffer.from(pdf) },
      { name: 'warehouse-log.txt', mimeType: 'text/plain', buffer: Buffer.from(large) },
    ]);
    // …and, while they upload, one dropped on the drop zone as from a file manager: it joins their queue.
    const dropped = await page.evaluateHandle(
      `(() => { const t = new DataTransfer(); t.items.add(new File(['# Opening hours\\nThe shop is open from 9 to 17 on weekdays.'], 'faq.md', { type: 'text/markdown' })); return t; })()`,
    );
    await page.locator('.dropzone').dispatchEvent('dragover', { dataTransfer: dropped });
    expect(await page.locator('.dropzone').getAttribute('class')).toContain('dragging');
    await page.locator('.dropzone').dispatchEvent('drop', { dataTransfer: dropped });
    const uploads = page.getByRole('list', { name: 'Uploads' });
    await expect.poll(() => uploads.getByRole('progressbar').count()).toBe(3);
    await expect.poll(async () => (await uploads.textContent()) ?? '', { timeout: 30_000 }).toMatch(/^(?!.*(queued|uploading|failed)).*done.*done.*done/);
    // Live: the figures follow the index until it holds all three files.
    const figures = () => page.locator('dl.stats').textContent();
    // (4 MB of text is some 3,600 passages: a minute alone, over two and a half when the whole suite shares two busy cores.)
    await expect.poll(figures, { timeout: 300_000, interval: 250 }).toMatch(/^Statusready.*Documents3Chunks[1-9]/);
    for (const name of ['faq.md', 'policies.pdf', 'warehouse-log.txt']) await expect.poll(() => page.getByRole('cell', { name, exact: true }).count()).toBe(1);
    await page.getByLabel('Search this source').fill('How long to return an item?');
    await page.getByRole('button', { name: 'Search' }).click();
    const first = page.locator('.results li').first();
    await expect.poll(() => first.textContent()).toContain('returned within 30 days');
    expect(await first.textContent()).toContain('policies.pdf, page 2');
    expect(await first.locator('mark').allTextContents()).toEqual(expect.arrayContaining(['returned']));
    await checkPage('knowledge-source');
  }, 360_000);

  it('shows a PostgreSQL source by its table and columns, not by files', async () => {
    const created = await fetch(`${base}/v1/knowledge-sources`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Orders DB', type: 'postgresql', config: { host: 'localhost', port: 5432, database: 'shop', table: 'public.articles', textColumns: ['title', 'body'], titleColumn: 'title' } }),
    });
    expect(created.status).toBe(201);
    await nav('Knowledge');
    await page.getByRole('link', { name: 'Orders DB' }).click();
    await page.getByRole('heading', { name: 'Table' }).waitFor();
    const table = (await page.locator('dl.facts').textContent()) ?? '';
    for (const shown of ['localhost:5432', 'shop', 'public.articles', 'title, body', 'the primary key']) expect(table).toContain(shown);
    expect(await page.locator('dl.stats').textContent()).not.toContain('Files');
    await checkPage('knowledge-postgres');
  });

  it('shows the API’s validation message at the field, then creates an agent with an approval-gated tool', async () => {
    await nav('Agents');
    await page.getByRole('link', { name: 'Create your first agent' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Support');
    await page.getByLabel('Temperature (0–2)').fill('5');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await expect.poll(() => page.locator('#agent-temperature-error').textContent()).toMatch(/temperature .*between 0 and 2/);
    expect(await page.getByLabel('Temperature (0–2)').getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Temperature (0–2)').fill('0.2');
    await page.getByLabel('document-search').check();
    await page.getByLabel(/Help centre/).check();
    await page.getByLabel('Add a tool').selectOption('http');
    await page.getByLabel('Tool 1 (JSON)').fill(
      JSON.stringify({
        type: 'http',
        name: 'order_status',
        description: 'Looks up the delivery status of an order by its order number',
        url: `${ordersUrl}/orders/{{orderId}}`,
        parameters: { type: 'object', properties: { orderId: { type: 'string', pattern: '^[A-Z][0-9]+$' } }, required: ['orderId'] },
      }),
    );
    await page.getByLabel('Require approval before each call').check();
    await page.getByLabel(/Publish over the A2A protocol/).check();
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.getByRole('heading', { name: 'Agent: Support' }).waitFor();
    // Published: the editor says where its card is.
    await expect.poll(() => page.getByText('Agent card:').textContent()).toMatch(/\/a2a\/agt_[0-9a-z]+\/\.well-known\/agent-card\.json/);
    await checkPage('agent-editor');
  });

  it('streams a cited reply, opens the passage, runs a tool call once it is approved and tells the agent why another was rejected', async () => {
    await page.getByRole('link', { name: 'Open in chat' }).click();
    await page.getByLabel('Message').fill('How long do I have to return an item?');
    await page.getByRole('button', { name: 'Send' }).click();
    const citation = page.getByRole('button', { name: /^Citation 1: policies\.pdf, page 2/ });
    await citation.waitFor({ timeout: 20_000 });
    await citation.click();
    const dialog = page.getByRole('dialog');
    await expect.poll(() => dialog.textContent()).toContain('returned within 30 days');
    await checkPage('chat-passage');
    await dialog.getByRole('button', { name: 'Close' }).click();

    await page.getByLabel('Message').fill('Where is my order A17?');
    await page.getByLabel('Message').press('Enter');
    const approve = page.getByRole('button', { name: 'Approve order_status' });
    await approve.waitFor({ timeout: 20_000 });
    expect(await page.getByRole('group', { name: 'Tool calls waiting for approval' }).textContent()).toContain('"orderId": "A17"');
    await checkPage('chat-approval');
    await approve.click();
    await expect.poll(() => page.locator('.message.assistant').last().textContent(), { timeout: 20_000 }).toMatch(/shipped/);
    expect(await page.locator('.tool-call summary').last().textContent()).toMatch(/order_status \(\d+ ms\)/);
    // The turn has ended once the composer offers to send again.
    await page.getByRole('button', { name: 'Send' }).waitFor();

    // A rejected call, with the reason the agent is told.
    await page.getByLabel('Message').fill('Where is my order B9?');
    await page.getByLabel('Message').press('Enter');
    const reject = page.getByRole('button', { name: 'Reject order_status' });
    await reject.waitFor({ timeout: 20_000 });
    await page.getByLabel('Reason (optional, told to the agent)').fill('not before the customer has signed in');
    await reject.click();
    await expect.poll(() => page.locator('.message.assistant').last().textContent(), { timeout: 20_000 }).toContain('not before the customer has signed in');
    expect(await page.locator('.tool-call summary').last().textContent()).toMatch(/order_status \(failed\)/);
    await page.getByRole('button', { name: 'Send' }).waitFor();

    // The session is in the history, and reopening it shows the three turns from the API.
    const sessions = page.getByRole('complementary', { name: 'Sessions' });
    await expect.poll(() => sessions.getByRole('listitem').count()).toBe(1);
    await page.getByRole('link', { name: 'New conversation' }).click();
    await expect.poll(() => page.locator('.message').count()).toBe(0);
    await sessions.getByRole('listitem').getByRole('link').click();
    await expect.poll(() => page.locator('.message.user').count()).toBe(3);
    await checkPage('chat');

    // Forked at the first reply: a second conversation with that exchange only, the first left whole.
    await page.locator('.message.assistant').first().getByRole('button', { name: 'Fork from here' }).click();
    await expect.poll(() => sessions.getByRole('listitem').count()).toBe(2);
    await expect.poll(() => page.locator('.message').count()).toBe(2);
    expect(await page.locator('.message.user').first().textContent()).toContain('How long do I have to return an item?');
  });

  it('pauses a chat for the end user to connect their account, and goes on once they have', async () => {
    const idp = await startOidcServer({ redirectUri: `${base}/v1/oauth/callback` });
    try {
      const post = async (path: string, body: unknown) => {
        const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
        expect(res.status, await res.clone().text()).toBe(201);
        return ((await res.json()) as { data: { id: string } }).data;
      };
      await post('/v1/oauth-providers', { name: 'calendar', issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, scopes: ['openid', 'offline_access', 'calendar.read'], extraAuthorizeParams: { prompt: 'consent', resource: RESOURCE } });
      const tool = { type: 'http', name: 'calendar_events', description: 'Lists the calendar events of the user', url: `${idp.resource}/events`, auth: { type: 'oauth2', provider: 'calendar' } };
      const agent = await post('/v1/agents', { name: 'Calendar', model: 'gpt-4', tools: [tool] });
      await page.goto(`${base}/console#/chat/${agent.id}`);
      await page.getByLabel('As end user').fill('u-ana');
      await page.getByLabel('Message').fill('What are my calendar events?');
      await page.getByRole('button', { name: 'Send' }).click();
      const link = page.getByRole('link', { name: 'Connect calendar' });
      await link.waitFor({ timeout: 20_000 });
      await checkPage('chat-connect');
      // The end user signs in and consents at the provider (driven by the test), and lands on Cairn's callback page.
      const back = await idp.login((await link.getAttribute('href'))!, 'u-ana');
      const landed = await fetch(back);
      expect(await landed.text()).toContain('Account connected');
      await page.getByRole('button', { name: 'Connected: continue' }).click();
      await expect.poll(() => page.locator('.message.assistant').last().textContent(), { timeout: 20_000 }).toContain('Dentist for u-ana');
      expect(idp.calls.at(-1)).toEqual({ sub: 'u-ana' });
    } finally {
      await idp.close();
    }
  });

  it('starts a background run, follows its steps, approves its call, and re-runs it from a step', async () => {
    await nav('Agents');
    await page.getByRole('link', { name: 'Support', exact: true }).click();
    await page.getByRole('link', { name: 'Background runs' }).click();
    await page.getByLabel('Job for the agent').fill('Where is my order A17?');
    await page.getByRole('button', { name: 'Start run' }).click();
    const approve = page.getByRole('button', { name: 'Approve order_status' });
    await approve.waitFor({ timeout: 20_000 });
    await expect.poll(() => page.locator('.page-head .badge').textContent()).toBe('requires_action');
    await checkPage('run-waiting');
    await approve.click();
    await expect.poll(() => page.locator('.page-head .badge').textContent(), { timeout: 20_000 }).toBe('completed');
    await expect.poll(() => page.locator('.bubble').textContent()).toMatch(/shipped/);
    const steps = page.getByRole('table');
    await expect.poll(() => steps.textContent()).toContain('order_status');
    await checkPage('run');

    await page.getByRole('button', { name: 'Re-run from step 1' }).click();
    await expect.poll(() => page.getByText(/re-runs run_/).count(), { timeout: 20_000 }).toBe(1);
    await expect.poll(() => page.locator('.page-head .badge').textContent(), { timeout: 20_000 }).toBe('completed');
    // The first model call and the approved tool call were taken over, not made again.
    await expect.poll(() => page.getByText('reused').count()).toBe(2);
    await page.getByRole('link', { name: 'All runs' }).click();
    await expect.poll(() => page.getByRole('table').getByRole('row').count()).toBe(3);
  });

  it('publishes versions, shows what one changed, splits an alias 90/10 with the slider and rolls it back', async () => {
    await nav('Agents');
    await page.getByRole('link', { name: 'Support', exact: true }).click();
    await page.getByRole('link', { name: 'Versions and aliases' }).click();
    await page.getByRole('heading', { name: 'Releases: Support' }).waitFor();
    await page.getByLabel('Description').fill('first release');
    await page.getByRole('button', { name: 'Publish the draft' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe('Published version 1.');
    // A change to the draft, published as version 2.
    await page.getByRole('link', { name: 'Edit the draft' }).click();
    await page.getByLabel('Instructions (system prompt)').fill('Answer in one sentence.');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await page.getByRole('link', { name: 'Versions and aliases' }).click();
    await page.getByRole('button', { name: 'Publish the draft' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe('Published version 2.');
    await page.getByRole('button', { name: 'What v2 changed' }).click();
    const diff = page.locator('.diff');
    await expect.poll(() => diff.textContent()).toContain('/instructions');
    expect(await diff.textContent()).toContain('"Answer in one sentence."');

    await page.getByLabel('Version', { exact: true }).fill('1');
    await page.getByLabel('Second version (optional)').fill('2');
    await page.getByLabel(/^Share of v1/).fill('90');
    expect(await page.getByText('Share of v1: 90%, v2: 10%').count()).toBe(1);
    await page.getByRole('button', { name: 'Save alias' }).click();
    const aliases = page.getByRole('table').last();
    await expect.poll(() => aliases.textContent()).toContain('v1 90% · v2 10%');
    await checkPage('releases');
    await page.getByRole('button', { name: 'All to v1 (roll back)' }).click();
    await page.getByRole('button', { name: 'Save alias' }).click();
    await expect.poll(() => aliases.textContent()).toContain('v1 100%');
    expect(await aliases.textContent()).not.toContain('v2');
  });

  it('shows a compile error at its step, draws the graph, runs the workflow, completes its human step and draws the timeline', async () => {
    await nav('Workflows');
    await page.getByRole('link', { name: 'Build your first workflow' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Refund check');
    // Each step's settings are a form built from its kind's JSON Schema (the API's own document).
    const settings = (n: number) => page.getByRole('group', { name: `Step ${n} settings` });
    await settings(1).getByLabel('expression').fill('$uppercase(input');
    await page.getByRole('button', { name: 'Add a step' }).click();
    await page.getByLabel('Step 2 id').fill('approve');
    await page.getByLabel('Step 2 id').press('Tab');
    await page.locator('#step-1-type').selectOption('human');
    expect(await settings(2).getByLabel('prompt').inputValue()).toBe('Approve?');
    // What a plain box cannot hold (the human step's answer schema) is a JSON box of its own.
    expect(JSON.parse(await settings(2).getByLabel('schema').inputValue())).toMatchObject({ properties: { approved: { type: 'boolean' } } });
    await settings(2).getByLabel('timeoutSeconds').fill('3600');
    await page.getByRole('button', { name: 'Add a step' }).click();
    await page.getByLabel('Step 3 id').fill('reply');
    await settings(3).getByLabel('expression').fill('steps.upper.output & (steps.approve.output.approved ? " approved" : " refused")');
    await page.getByRole('button', { name: 'Create workflow' }).click();
    await expect.poll(() => page.locator('#step-0-error').textContent()).toMatch(/steps\[0\]\.config\.expression is not a valid JSONata expression/);
    // The JSON stays as the advanced view, and holds what the form wrote.
    await page.getByRole('button', { name: 'Edit step 2 as JSON' }).click();
    expect(JSON.parse(await page.getByLabel('Step 2 settings (JSON)').inputValue())).toMatchObject({ prompt: 'Approve?', timeoutSeconds: 3600 });
    await page.getByRole('button', { name: 'Edit step 1 as JSON' }).click();
    await page.getByLabel('Step 1 settings (JSON)').fill('{"expression": "$uppercase(input)"}');
    await page.getByRole('button', { name: 'Create workflow' }).click();
    await page.getByRole('heading', { name: 'Workflow: Refund check' }).waitFor();
    expect(await page.getByRole('img', { name: /Workflow steps/ }).getAttribute('aria-label')).toBe('Workflow steps: upper → approve; approve → reply');
    await checkPage('workflow-editor');

    await page.getByLabel('Input', { exact: true }).fill('refund order b12');
    await page.getByRole('button', { name: 'Run workflow' }).click();
    const form = page.getByRole('form', { name: 'Complete step approve' });
    await form.waitFor({ timeout: 20_000 });
    expect(await form.textContent()).toContain('Approve?');
    await checkPage('execution-waiting');
    await form.getByLabel('approved').check();
    await form.getByRole('button', { name: 'Complete approve' }).click();
    await expect.poll(() => page.locator('.page-head .badge').textContent(), { timeout: 20_000 }).toBe('succeeded');
    const timeline = await page.getByRole('img', { name: /^Step timeline/ }).textContent();
    expect(timeline).toMatch(/upper succeeded \d+ ms, approve succeeded [\d.]+ (ms|s), reply succeeded \d+ ms/);
    expect(await page.locator('.gantt rect.bar-succeeded').count()).toBe(3);
    await expect.poll(() => page.getByText('REFUND ORDER B12 approved').count()).toBeGreaterThan(0);
    await checkPage('execution');

    // Re-run from the last step: the person's answer and the first step are kept, not asked again.
    await page.getByRole('button', { name: 'Re-run from reply' }).click();
    await expect.poll(() => page.getByText(/re-runs exe_/).count(), { timeout: 20_000 }).toBe(1);
    await expect.poll(() => page.locator('.page-head .badge').textContent(), { timeout: 20_000 }).toBe('succeeded');
    expect(await page.getByText('reused').count()).toBe(2);
  });

  it('charts requests and tokens per day, agent and model', async () => {
    await nav('Usage');
    const perDay = page.getByRole('img', { name: /^Requests per day/ });
    await perDay.waitFor();
    const today = new Date().toISOString().slice(0, 10);
    expect(await perDay.getAttribute('aria-label')).toMatch(new RegExp(`${today} [1-9]`));
    expect(await page.getByRole('list', { name: 'Tokens per agent' }).textContent()).toContain('Support');
    expect(await page.getByRole('list', { name: 'Tokens per model' }).textContent()).toContain('local/');
    await checkPage('usage');
  });

  it('builds a dataset, runs it against two versions, opens a case beside its expectation and trace, and compares the runs', async () => {
    await nav('Evaluations');
    await page.getByText('No datasets yet').waitFor();
    await checkPage('evals-empty');
    await page.getByLabel('Name', { exact: true }).fill('Smoke');
    const cases = page.getByLabel(/^Cases \(JSON Lines/);
    await cases.fill('{"input": "hello", "expected": {"regex": "."}}\n{"input": ');
    await page.getByRole('button', { name: 'Create dataset' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('Line 2 is not JSON');
    await cases.fill('{"input": "hello", "expected": {"regex": "."}}\n\n{"input": "Who are you?", "expected": {"contains": ["Support"]}}');
    await page.getByRole('button', { name: 'Create dataset' }).click();
    await page.getByRole('heading', { name: 'Dataset: Smoke' }).waitFor();
    await expect.poll(() => page.getByRole('table').last().textContent()).toContain('Who are you?');

    const run = async (release: string) => {
      await page.getByLabel('Target').selectOption({ label: 'Agent: Support' });
      await page.getByLabel('Version or alias (empty: the draft)').fill(release);
      for (const s of ['f1', 'citations']) await page.getByLabel(s, { exact: true }).uncheck();
      for (const s of ['contains', 'regex']) await page.getByLabel(s, { exact: true }).check();
      await page.getByLabel('Threshold for contains').fill('0.5');
      await page.getByRole('button', { name: 'Start the run' }).click();
      await page.getByRole('heading', { name: /^Run evr_/ }).waitFor();
      await expect.poll(() => page.locator('.stats').textContent(), { timeout: 30_000 }).toContain('2/2');
      return /Run (evr_\w+)/.exec((await page.getByRole('heading', { name: /^Run evr_/ }).textContent()) ?? '')![1]!;
    };
    const first = await run('1');
    const scores = page.getByRole('table').first();
    // The summary comes with the run's completion, which can follow "2/2" by one of the page's 2-second polls.
    await expect.poll(() => scores.textContent(), { timeout: 20_000 }).toMatch(/contains.*≥ 0\.5/);
    expect(await scores.textContent()).toContain('regex');
    await page.getByRole('button', { name: 'Case 2 in detail' }).click();
    const detail = page.getByLabel('Case 2', { exact: true });
    await detail.getByRole('heading', { name: 'Expected' }).waitFor();
    expect(await detail.textContent()).toContain('"Support"');
    await expect.poll(() => detail.locator('.span-tree').first().textContent()).toContain('eval.case 2');
    await checkPage('eval-run');

    await page.locator('main a[href^="#/evals/datasets/"]').first().click();
    await page.getByRole('heading', { name: 'Dataset: Smoke' }).waitFor();
    const second = await run('2');
    await nav('Evaluations');
    await page.getByLabel(`Compare ${first}`).check();
    await page.getByLabel(`Compare ${second}`).check();
    await page.getByRole('link', { name: 'Compare the two runs' }).click();
    await page.getByRole('heading', { name: 'Two runs side by side' }).waitFor();
    const side = page.getByRole('table').first();
    await expect.poll(() => side.textContent()).toContain(`${first}`);
    expect(await side.textContent()).toMatch(/Support|agt_/);
    expect(await side.textContent()).toContain('contains');
    await checkPage('eval-compare');
  });

  it('with a platform token: queries a tenant table and draws a user’s memory graph', async () => {
    const tenant = await fetch(`${base}/platform/tenants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Acme', tenantId: 'acme-console', plan: 'pro' }),
    }).then((r) => r.json() as Promise<{ data: { apiKey: string; accessToken: string } }>);
    const h = { 'x-api-key': tenant.data.apiKey, 'content-type': 'application/json' };
    const agent = await fetch(`${base}/v1/agents`, { method: 'POST', headers: h, body: JSON.stringify({ name: 'Concierge', model: 'gpt-4' }) }).then((r) => r.json() as Promise<{ data: { id: string } }>);
    const said = await fetch(`${base}/v1/agents/${agent.data.id}/converse`, {
      method: 'POST',
      headers: h,
      body: JSON.stringify({ message: 'I am Ana from Lisbon and I prefer express shipping', context: { userId: 'ana' } }),
    });
    expect(said.status).toBe(200);

    // The token alone opens the platform pages, and only those.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Platform access token (optional)').fill(tenant.data.accessToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: /tables/i }).first().waitFor();
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents()).toEqual(['Tables', 'Memory graph']);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').fill(tenant.data.apiKey);
    await page.getByLabel('Platform access token (optional)').fill(tenant.data.accessToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await nav('Tables');
    await page.getByRole('button', { name: 'Query' }).click();
    await expect.poll(() => page.getByRole('cell', { name: 'Concierge' }).count()).toBe(1);
    await checkPage('platform-tables');

    await nav('Memory graph');
    await page.getByLabel('User id').fill('ana');
    await page.getByRole('button', { name: 'Draw memory' }).click();
    const graph = page.getByRole('img', { name: /^Memory graph/ });
    await graph.waitFor();
    expect(await graph.getAttribute('aria-label')).toContain('user prefers express shipping');
    expect(await graph.locator('circle').count()).toBeGreaterThanOrEqual(2);
    await checkPage('platform-memory');
  });

  it('logged no errors in the browser', () => {
    // The browser logs the refused requests the tests made on purpose (wrong key, invalid input).
    const unexpected = browserErrors.filter((e) => !/^Failed to load resource: the server responded with a status of (400|401)/.test(e));
    expect(unexpected.join('\n'), `refused requests: ${refused.join(', ')}`).toBe('');
  });
});
