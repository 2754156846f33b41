/**
 * Shared locators and readers for the GPU Env UI tests.
 */
import { test } from '@jupyterlab/galata';
import type { IJupyterLabPageFixture } from '@jupyterlab/galata';
import { expect } from '@playwright/test';
import type { APIRequestContext, Locator } from '@playwright/test';
import * as path from 'path';

export const PANEL_ID = 'jupyter-gpu-env:sidebar';

/** The extension's REST API, below the server's base URL. */
export const API = '/gpu-env/api';

/** `GET` from the REST API (`path` below it), expecting success. */
export async function apiGet<T>(
  request: APIRequestContext,
  path: string
): Promise<T> {
  const response = await request.get(`${API}/${path}`);
  expect(response.ok()).toBe(true);
  return response.json();
}

/**
 * Run a command from the command palette by its label, as a user would: open
 * the palette, type, click the (enabled) item.
 *
 * JupyterLab's modal palette hides itself as soon as the focus leaves it, and
 * a notebook that is still opening (its kernel connecting) takes the focus
 * once more when it settles; so the whole sequence is retried until the click
 * lands, never one step alone. `command` checks that the item is the expected
 * command, `category` that the palette lists it under that heading.
 */
export async function runFromPalette(
  page: IJupyterLabPageFixture,
  label: string,
  options: { command?: string; category?: string } = {}
): Promise<void> {
  const palette = page.locator('#command-palette');
  const input = palette.locator('.lm-CommandPalette-input');
  const item = palette.locator(
    '.lm-CommandPalette-item:not(.lm-mod-disabled)',
    { hasText: label }
  );
  await expect(async () => {
    if (!(await input.isVisible())) {
      // The palette's own command, not its shortcut: a key press lands
      // wherever the focus happens to be.
      await execute(page, 'apputils:activate-command-palette');
    }
    await input.fill(label, { timeout: 2000 });
    if (options.command) {
      await expect(item).toHaveAttribute('data-command', options.command, {
        timeout: 5000
      });
    }
    if (options.category) {
      await expect(palette.locator('.lm-CommandPalette-header')).toContainText(
        [options.category],
        { timeout: 5000 }
      );
    }
    await item.click({ timeout: 5000 });
  }).toPass({ timeout: 60000 });
}

/** Upload a notebook to `file` and make it the current widget. */
export async function openNotebook(
  page: IJupyterLabPageFixture,
  file: string,
  content: string
): Promise<void> {
  await page.contents.uploadContent(content, 'text', file);
  await page.notebook.openByPath(file);
  await page.notebook.activate(path.basename(file));
}

/**
 * Write the notebook `content` to `file` and send it to the local backend
 * through the API, with `fields` (a name, a sweep) besides; answers what
 * the server recorded (the job, or the sweep).
 */
export async function sendThroughApi<T>(
  page: IJupyterLabPageFixture,
  file: string,
  content: string,
  fields: Record<string, unknown> = {}
): Promise<T> {
  await page.contents.uploadContent(content, 'text', file);
  const response = await page.request.post(`${API}/jobs`, {
    data: { notebook_path: file, backend: 'local', ...fields }
  });
  expect(response.status()).toBe(201);
  return response.json();
}

/** The current notebook's "Send to batch" toolbar button. */
export function sendButton(page: IJupyterLabPageFixture): Locator {
  return page.locator(
    '.jp-NotebookPanel:not(.lm-mod-hidden) [data-jp-item-name="send-to-batch"]'
  );
}

/** The open dialog. */
export function dialog(page: IJupyterLabPageFixture): Locator {
  return page.locator('.jp-Dialog');
}

/** Where a test saves the picture `file` (ui-tests/screenshots/). */
export function screenshotPath(file: string): string {
  return path.join(__dirname, '..', 'screenshots', file);
}

/** The open dialog's button `name` (`exact`: no longer label containing it). */
export function dialogButton(
  page: IJupyterLabPageFixture,
  name: string,
  exact = false
): Locator {
  return dialog(page).getByRole('button', exact ? { name, exact } : { name });
}

/**
 * Run a JupyterLab command in the page. Its result stays there: a widget
 * (the Launcher, a document) cannot be sent back to the test.
 */
export async function execute(
  page: IJupyterLabPageFixture,
  command: string,
  args: Record<string, string> = {}
): Promise<void> {
  await page.evaluate(
    async ([id, values]) => {
      await window.jupyterapp.commands.execute(id, values);
    },
    [command, args] as const
  );
}

/** Save a picture of the open dialog's content as `file` (screenshots/). */
export async function screenshotDialog(
  page: IJupyterLabPageFixture,
  file: string
): Promise<void> {
  await dialog(page)
    .locator('.jp-Dialog-content')
    .screenshot({ path: screenshotPath(file) });
}

/** Click the open dialog's Submit and wait for the dialog to close. */
export async function submitDialog(
  page: IJupyterLabPageFixture
): Promise<void> {
  await dialogButton(page, 'Submit').click();
  await expect(dialog(page)).toHaveCount(0);
}

/** Click `button` on the notification whose message is `message`. */
export async function clickToastButton(
  page: IJupyterLabPageFixture,
  message: Locator,
  button: string
): Promise<void> {
  await page
    .locator('.Toastify__toast', { has: message })
    .getByRole('button', { name: button })
    .click();
}

/** Each test of the suite in a wide window with a `width`-pixel sidebar. */
export function wideSidebar(width: number): void {
  test.beforeEach(async ({ page }) => {
    await page.setViewportSize({ width: 1400, height: 900 });
    await page.sidebar.setWidth(width);
  });
}

export function panel(page: IJupyterLabPageFixture): Locator {
  return page.locator('[data-testid="gpu-env-panel"]');
}

export function memoryBar(page: IJupyterLabPageFixture): Locator {
  return page.getByTestId('gpu-env-memory-bar');
}

export interface IBarReading {
  used: string | null;
  limit: string | null;
  source: string | null;
  /** The figure shown next to the bar's label, e.g. "1.2 GiB of 4.0 GiB42 %". */
  text: string;
}

/** Read a usage bar's raw numbers and its visible figure in one go. */
export async function readMemory(
  page: IJupyterLabPageFixture
): Promise<IBarReading> {
  const bar = memoryBar(page);
  return bar.evaluate((node: Element) => {
    const usage = node.closest('.jp-GpuEnv-usage');
    return {
      used: node.getAttribute('data-used'),
      limit: node.getAttribute('data-limit'),
      source: node.getAttribute('data-source'),
      text:
        usage?.querySelector('.jp-GpuEnv-usageValue')?.textContent?.trim() ?? ''
    };
  });
}

/**
 * Save a picture of the panel, cropped below its last section (the sidebar
 * is as tall as the window; the empty space under the sections says nothing).
 */
export async function screenshotPanel(
  page: IJupyterLabPageFixture,
  file: string
): Promise<void> {
  const clip = await panel(page).evaluate((node: Element) => {
    const box = node.getBoundingClientRect();
    const sections = node.querySelectorAll('.jp-GpuEnv-collapsible');
    const last = sections[sections.length - 1]?.getBoundingClientRect();
    const bottom = last ? Math.min(last.bottom + 8, box.bottom) : box.bottom;
    return { x: box.x, y: box.y, width: box.width, height: bottom - box.y };
  });
  await page.screenshot({ path: file, clip });
}

/** A notebook of code cells, each with its tags (`parameters`, `results`), as JSON. */
export function notebook(...cells: [string[], string][]): string {
  return JSON.stringify({
    cells: cells.map(([tags, source], i) => ({
      cell_type: 'code',
      execution_count: null,
      id: `cell-${i}`,
      metadata: tags.length ? { tags } : {},
      outputs: [],
      source
    })),
    metadata: {
      kernelspec: {
        name: 'python3',
        display_name: 'Python 3 (ipykernel)',
        language: 'python'
      },
      language_info: { name: 'python' }
    },
    nbformat: 4,
    nbformat_minor: 5
  });
}
