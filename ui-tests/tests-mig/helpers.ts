/**
 * Shared paths, locators and pictures of the MIG UI suite.
 *
 * The recorded captures live in ../shared/fixtures/gpu beside the
 * repository and are read in place, never copied into it.
 */
import type { IJupyterLabPageFixture } from '@jupyterlab/galata';
import { expect, test } from '@jupyterlab/galata';
import type { Locator } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';

export const PANEL_ID = 'jupyter-gpu-env:sidebar';
export const MIB = 1024 * 1024;
export const SCREENSHOTS = path.join(__dirname, '..', 'screenshots');
export const FIXTURES = path.resolve(
  __dirname,
  '..',
  '..',
  '..',
  'shared',
  'fixtures',
  'gpu'
);
/** The capture the server replays (jupyter_server_mig_config.py). */
export const H100_CAPTURE = path.join(
  FIXTURES,
  'nvgpuexp-capture-h100-mig-590.48.01.txt'
);
export const H200_CAPTURE = path.join(
  FIXTURES,
  'nvgpuexp-capture-h200-mig-590.48.01.txt'
);

/** Why the suite skips, or null when the captures are there. */
export function missingCaptures(): string | null {
  const missing = [H100_CAPTURE, H200_CAPTURE].filter(f => !fs.existsSync(f));
  return missing.length === 0
    ? null
    : `No recorded MIG capture at ${missing.join(', ')}: the MIG suite ` +
        'needs ../shared/fixtures/gpu beside the repository.';
}

/** A group of tests that skips, saying why, when the captures are missing. */
export function describeRecorded(title: string, tests: () => void): void {
  test.describe(title, () => {
    const missing = missingCaptures();
    test.skip(missing !== null, missing ?? '');
    tests();
  });
}

// The client adds a cache-busting query: `gpu-env/api/gpu?1763800000000`.
export const GPU_ROUTE = /\/gpu-env\/api\/gpu(\?.*)?$/;
export const RELEASE_ROUTE = /\/gpu-env\/api\/gpu\/release(\?.*)?$/;

/** Open the sidebar, wide and tall enough for the whole section. */
export async function openPanel(page: IJupyterLabPageFixture): Promise<void> {
  await page.setViewportSize({ width: 1280, height: 1400 });
  await page.sidebar.setWidth(320);
  await page.sidebar.openTab(PANEL_ID);
  await expect(page.getByTestId('gpu-env-held')).toBeVisible();
}

/** A picture of the panel down to the end of the "GPU & memory" section. */
export async function screenshotSection(
  page: IJupyterLabPageFixture,
  file: string
): Promise<void> {
  const clip = await page
    .locator('[data-testid="gpu-env-panel"]')
    .evaluate((node: Element) => {
      const box = node.getBoundingClientRect();
      const memory = node.querySelector('[data-section="memory"]');
      const bottom = memory?.getBoundingClientRect().bottom ?? box.bottom;
      return {
        x: box.x,
        y: box.y,
        width: box.width,
        height: Math.min(bottom + 8, box.bottom) - box.y
      };
    });
  await page.screenshot({ path: path.join(SCREENSHOTS, file), clip });
}

/**
 * The GPU instance blocks of the MIG slot diagram, once they are those of
 * `profiles` (in any order).
 */
export async function instanceBlocks(
  diagram: Locator,
  profiles: string[]
): Promise<Locator> {
  const blocks = diagram.getByTestId('gpu-env-mig-instance');
  await expect(blocks).toHaveCount(profiles.length);
  const shown = await blocks.evaluateAll(nodes =>
    nodes.map(n => n.getAttribute('data-profile'))
  );
  expect([...shown].sort()).toEqual([...profiles].sort());
  return blocks;
}
