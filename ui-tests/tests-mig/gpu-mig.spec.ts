/**
 * The "GPU & memory" section against a server replaying a real H100 MIG
 * capture (jupyter_server_mig_config.py): this server holds one 1g.10gb
 * slice, named by its MIG UUID in CUDA_VISIBLE_DEVICES.
 *
 * The expected figures are read from the capture itself, so the test says
 * what the recorded `nvidia-smi` said, not what the parser made of it.
 */
import { expect, test } from '@jupyterlab/galata';
import type { IJupyterLabPageFixture } from '@jupyterlab/galata';
import * as fs from 'fs';

import { formatBytes } from '../../labextension/src/components/format';
import {
  H100_CAPTURE,
  MIB,
  describeRecorded,
  instanceBlocks,
  openPanel,
  screenshotSection
} from './helpers';

interface IHeldSlice {
  uuid: string;
  gi: number;
  ci: number;
  usedBytes: number;
  totalBytes: number;
}

/**
 * The slice the server config makes visible (`Device 2`, a 1g.10gb), from
 * the capture's `nvidia-smi -L` and its MIG table under load.
 */
function heldSliceFromCapture(): IHeldSlice {
  const text = fs.readFileSync(H100_CAPTURE, 'utf-8');
  const listed = /MIG 1g\.10gb\s+Device\s+2: \(UUID: (MIG-[0-9a-f-]+)\)/.exec(
    text
  );
  const load = text.slice(text.indexOf('# load :: nvidia-smi (default table)'));
  // "|  0    9   0   2  |               9MiB /  9984MiB    | 16 ..."
  const row = /^\|\s+0\s+(\d+)\s+(\d+)\s+2\s+\|\s+(\d+)MiB \/\s+(\d+)MiB/m.exec(
    load
  );
  if (!listed || !row) {
    throw new Error(`${H100_CAPTURE} no longer lists MIG device 2 as expected`);
  }
  return {
    uuid: listed[1],
    gi: Number(row[1]),
    ci: Number(row[2]),
    usedBytes: Number(row[3]) * MIB,
    totalBytes: Number(row[4]) * MIB
  };
}

function section(page: IJupyterLabPageFixture) {
  return page.getByTestId('gpu-env-section-memory');
}

describeRecorded('GPU & memory with MIG (recorded H100 capture)', () => {
  test('shows the held slice first and the MIG slot diagram', async ({
    page
  }) => {
    const slice = heldSliceFromCapture();
    await openPanel(page);

    // My slice first: profile, UUID, GPU and compute instance, memory.
    const held = page.getByTestId('gpu-env-held');
    await expect(held.locator('.jp-GpuEnv-groupTitle')).toHaveText(
      'Your MIG slice'
    );
    await expect(page.getByTestId('gpu-env-held-profile')).toHaveText(
      '1g.10gb'
    );
    await expect(held).not.toContainText('(inferred)');
    await expect(page.getByTestId('gpu-env-held-uuid')).toHaveText(slice.uuid);
    await expect(page.getByTestId('gpu-env-held-ids')).toHaveText(
      `GI ${slice.gi} · CI ${slice.ci} · 16 SMs`
    );
    const bar = page.getByTestId('gpu-env-held-memory');
    await expect(bar).toHaveAttribute('data-used', String(slice.usedBytes));
    await expect(bar).toHaveAttribute('data-limit', String(slice.totalBytes));
    await expect(held).toContainText(
      `${formatBytes(slice.usedBytes)} of ${formatBytes(slice.totalBytes)}`
    );
    await expect(held).toContainText('Recorded nvidia-smi output');
    // It comes before the host memory.
    const order = await section(page).evaluate((node: Element) =>
      [...node.querySelectorAll('[data-testid]')]
        .map(e => e.getAttribute('data-testid'))
        .filter(id => id === 'gpu-env-held' || id === 'gpu-env-host')
    );
    expect(order).toEqual(['gpu-env-held', 'gpu-env-host']);

    // The diagram: the capture's four GPU instances on 8 memory slices.
    const diagram = page.getByTestId('gpu-env-mig-diagram');
    await expect(diagram).toHaveAttribute('data-slots', '8');
    const blocks = await instanceBlocks(diagram, [
      '1g.10gb',
      '1g.10gb',
      '2g.20gb',
      '3g.40gb'
    ]);
    // Only this server's slice is highlighted: GI 9, one memory slice.
    const mine = diagram.locator('[data-visible="true"]');
    await expect(mine).toHaveCount(1);
    await expect(mine).toHaveAttribute('data-profile', '1g.10gb');
    await expect(mine).toHaveAttribute('data-gi', String(slice.gi));
    await expect(mine).toHaveAttribute('data-size', '1');
    await expect(diagram).toContainText('yours');
    await expect(diagram).toContainText('drawn in order');
    // Blocks are as wide as their memory: 3g.40gb spans 4 slices, 1g one.
    const widths = await blocks.evaluateAll(nodes =>
      Object.fromEntries(
        nodes.map(n => [
          `${n.getAttribute('data-profile')}/${n.getAttribute('data-gi')}`,
          n.getBoundingClientRect().width
        ])
      )
    );
    expect(widths['3g.40gb/2']).toBeGreaterThan(3.5 * widths['1g.10gb/9']);
    expect(widths['2g.20gb/3']).toBeGreaterThan(1.8 * widths['1g.10gb/9']);

    // The machine's list: one bar per slice, this one marked.
    const slices = page.getByTestId('gpu-env-mig');
    await expect(slices).toHaveCount(4);
    await expect(slices.filter({ hasText: 'yours' })).toHaveCount(1);
    await expect(slices.filter({ hasText: '3 processes' })).toHaveCount(1);
    await expect(page.getByTestId('gpu-env-gpu-empty')).toHaveCount(0);
    await expect(page.getByTestId('gpu-env-idle')).toHaveCount(0);

    await screenshotSection(page, 'gpu-mig.png');
    await page.theme.setDarkTheme();
    await expect(page.getByTestId('gpu-env-held')).toBeVisible();
    await screenshotSection(page, 'gpu-mig-dark.png');
  });

  test('draws memory history, asked only while the section shows', async ({
    page
  }) => {
    const slice = heldSliceFromCapture();
    const asked = page.waitForResponse(
      r => r.url().includes('/gpu-env/api/gpu/history') && r.status() === 200
    );
    await openPanel(page);
    await asked;
    const host = page.getByTestId('gpu-env-spark-host');
    const gpu = page.getByTestId('gpu-env-spark-gpu');
    await expect(host).toBeVisible();
    await expect(gpu).toBeVisible();
    await expect(gpu).toContainText('MIG slice memory');
    await expect(gpu).toContainText(formatBytes(slice.usedBytes));
    await expect(gpu).toContainText(`limit ${formatBytes(slice.totalBytes)}`);
    expect(Number(await host.getAttribute('data-points'))).toBeGreaterThan(0);
    await expect(host.locator('path.jp-GpuEnv-sparkLine')).toHaveCount(1);

    // Another sidebar panel shown: no history requests for a whole interval.
    await page.sidebar.openTab('filebrowser');
    let requests = 0;
    page.on('request', request => {
      if (request.url().includes('/gpu-env/api/gpu/history')) {
        requests += 1;
      }
    });
    await page.waitForTimeout(11000);
    expect(requests).toBe(0);
  });

  test('lists kernels with their memory and opens the notebook of a row', async ({
    page
  }) => {
    // Named by JupyterLab: renaming through the contents API would leave the
    // kernel's session on the old path.
    const name = await page.notebook.createNew();
    if (!name) {
      throw new Error('no notebook was created');
    }
    await page.notebook.setCell(0, 'code', 'x = b"x" * (64 * 1024 * 1024)');
    await page.notebook.run();
    await page.notebook.save();
    await page.notebook.close();
    await openPanel(page);

    const row = page
      .getByTestId('gpu-env-kernel')
      .filter({ hasText: name })
      .first();
    await expect(row).toBeVisible({ timeout: 15000 });
    await expect(row).toHaveAttribute('data-openable', 'true');
    // The kernel holds the 64 MiB it was asked for, and more.
    await expect
      .poll(async () => Number(await row.getAttribute('data-host')), {
        timeout: 15000
      })
      .toBeGreaterThan(64 * MIB);
    await expect(row).toContainText(/\d+(\.\d)? MiB/);

    await row.click();
    await expect.poll(() => page.notebook.isActive(name)).toBe(true);
    // Closed first, so that no open notebook starts a kernel again.
    await page.notebook.close();
    await page.kernel.shutdownAll();
    await expect(page.getByTestId('gpu-env-kernels-empty')).toBeVisible({
      timeout: 10000
    });
  });
});
