/**
 * REST helpers and locators for the Environments and Images UI tests: the
 * tests set up what they need through the real API, so each runs alone.
 */
import type { IJupyterLabPageFixture } from '@jupyterlab/galata';
import { expect } from '@playwright/test';
import type { APIRequestContext, Locator } from '@playwright/test';

import type {
  IEnvironment,
  IEnvironmentList,
  IImage,
  IImageList,
  ITask
} from '../../labextension/src/api/types';
import { API, apiGet } from './helpers';

/** The real managed environment built by jupyter_server_test_config.py. */
export const DEMO = 'demo-python';

export async function listEnvironments(
  request: APIRequestContext
): Promise<IEnvironment[]> {
  return (await apiGet<IEnvironmentList>(request, 'environments')).environments;
}

export async function listImages(
  request: APIRequestContext
): Promise<IImage[]> {
  return (await apiGet<IImageList>(request, 'images')).images;
}

/** Wait until a task has ended, and return it. */
export async function waitTask(
  request: APIRequestContext,
  task: ITask
): Promise<ITask> {
  let current = task;
  await expect
    .poll(
      async () => {
        const response = await request.get(`${API}/tasks/${current.id}`);
        current = await response.json();
        return current.state;
      },
      { timeout: 60000, intervals: [250] }
    )
    .toMatch(/succeeded|failed|cancelled/);
  return current;
}

/**
 * Clone the demo environment as `name` unless it exists; with `kernel`,
 * register its kernel (true) or remove it (false).
 */
export async function ensureClone(
  request: APIRequestContext,
  name: string,
  options: { kernel?: boolean } = {}
): Promise<void> {
  if (!(await listEnvironments(request)).some(e => e.name === name)) {
    const response = await request.post(`${API}/environments`, {
      data: { source: DEMO, name }
    });
    expect(response.status()).toBe(202);
    const task = await waitTask(request, await response.json());
    expect(task.state).toBe('succeeded');
  }
  if (options.kernel !== undefined) {
    await setKernel(request, name, options.kernel);
  }
}

/** Delete the user's environment `name` if it exists. */
export async function removeEnvironment(
  request: APIRequestContext,
  name: string
): Promise<void> {
  const response = await request.delete(
    `${API}/environments/${name}?shutdown_kernels=true`
  );
  expect([200, 404]).toContain(response.status());
}

/** Register (or remove) the kernel of `name`. */
export async function setKernel(
  request: APIRequestContext,
  name: string,
  registered: boolean
): Promise<void> {
  const url = `${API}/environments/${name}/kernel`;
  if (registered) {
    expect((await request.post(url, { data: {} })).status()).toBe(201);
  } else {
    expect([200, 404]).toContain((await request.delete(url)).status());
  }
}

/** Delete every image packed from `environment`. */
export async function removeImages(
  request: APIRequestContext,
  environment: string
): Promise<void> {
  for (const image of await listImages(request)) {
    if (image.environment === environment) {
      await request.delete(`${API}/images/${image.id}`);
    }
  }
}

/** Start packing `environment` through the API; answers the task. */
export async function startPack(
  request: APIRequestContext,
  environment: string,
  compression: 'zstd' | 'xz' | 'none'
): Promise<ITask> {
  const response = await request.post(
    `${API}/environments/${environment}/image`,
    { data: { format: 'squashfs', compression } }
  );
  expect(response.status()).toBe(202);
  return response.json();
}

export function environmentsSection(page: IJupyterLabPageFixture): Locator {
  return page.getByTestId('gpu-env-section-environments');
}

export function imagesSection(page: IJupyterLabPageFixture): Locator {
  return page.getByTestId('gpu-env-section-images');
}

/** The row of environment `name` (in either list). */
export function envRow(page: IJupyterLabPageFixture, name: string): Locator {
  return environmentsSection(page).locator(
    `[data-testid="gpu-env-env"][data-name="${name}"]`
  );
}

/**
 * A button on a row itself: `kernel` (environments), `notebook` (images) and
 * `menu`, the "⋯" that opens the row's menu.
 */
export function rowAction(row: Locator, action: string): Locator {
  return row.locator(`.jp-GpuEnv-rowActions [data-action="${action}"]`);
}

/** Open a row's "⋯" menu; answers the menu, labelled for that row. */
export async function openRowMenu(row: Locator): Promise<Locator> {
  await rowAction(row, 'menu').click();
  const menu = row.page().locator('.lm-Menu.jp-GpuEnv-rowMenu');
  await expect(menu).toBeVisible();
  return menu;
}

/**
 * An item of an open row menu, by its command without the extension's
 * prefix: `clone-environment`, `edit-packages`, `check-gpu`, `image-usage`...
 */
export function menuItem(menu: Locator, command: string): Locator {
  return menu.locator(
    `.lm-Menu-item[data-command="jupyter-gpu-env:${command}"]`
  );
}

/** The visible labels of an open menu's items, in order. */
export async function menuLabels(menu: Locator): Promise<string[]> {
  const labels = menu.locator(
    '.lm-Menu-item:not(.lm-mod-hidden):not([data-type="separator"]) .lm-Menu-itemLabel'
  );
  return (await labels.allTextContents()).map(label => label.trim());
}

/** Choose `command` in a row's "⋯" menu. */
export async function chooseRowAction(
  row: Locator,
  command: string
): Promise<void> {
  await menuItem(await openRowMenu(row), command).click();
}
