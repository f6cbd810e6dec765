// Minimal SVG line charts for the bench (axes, ticks, one polyline per series, legend); runtime-neutral.

/** One line of a chart: its legend name and its (x, y) points in x order. */
export interface Series {
  name: string;
  points: [x: number, y: number][];
}

/** One chart panel. */
export interface LineChartOptions {
  title: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
  /** Logarithmic x axis with a tick per power of ten (all x must be > 0). */
  logX?: boolean;
}

const _WIDTH = 640, _HEIGHT = 340;
const _MARGIN = { left: 64, right: 24, top: 58, bottom: 46 };
const _COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"];

/** A standalone SVG document with one line chart; y starts at 0. */
export function lineChart(options: LineChartOptions): string {
  return lineCharts([options]);
}

/** A standalone SVG document with the given charts stacked top to bottom. */
export function lineCharts(panels: LineChartOptions[]): string {
  const height = _HEIGHT * panels.length;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${_WIDTH}" height="${height}" ` +
    `viewBox="0 0 ${_WIDTH} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${_WIDTH}" height="${height}" fill="white"/>`,
    ...panels.map((p, i) => `<g transform="translate(0 ${i * _HEIGHT})">\n${_panel(p)}\n</g>`),
    "</svg>",
    "",
  ].join("\n");
}

function _panel({ title, xLabel, yLabel, series, logX = false }: LineChartOptions): string {
  const left = _MARGIN.left, right = _WIDTH - _MARGIN.right;
  const top = _MARGIN.top, bottom = _HEIGHT - _MARGIN.bottom;
  const points = series.flatMap((s) => s.points).filter(([x, y]) => isFinite(x) && isFinite(y));
  const xs = points.length ? points.map(([x]) => x) : logX ? [1, 10] : [0, 1];
  const ys = points.map(([, y]) => y);
  const xTicks = logX
    ? _logTicks(Math.min(...xs), Math.max(...xs))
    : _ticks(Math.min(...xs), Math.max(...xs));
  const yTicks = _ticks(0, Math.max(...ys, 0));
  const [x0, x1] = [xTicks[0], xTicks[xTicks.length - 1]];
  const [y0, y1] = [yTicks[0], yTicks[yTicks.length - 1]];
  const fx = (x: number) =>
    logX
      ? left + (right - left) * (Math.log10(x / x0) / Math.log10(x1 / x0))
      : left + (right - left) * ((x - x0) / (x1 - x0 || 1));
  const fy = (y: number) => bottom - (bottom - top) * ((y - y0) / (y1 - y0 || 1));
  const out = [
    `<text x="${left}" y="22" font-size="15" font-weight="bold">${_esc(title)}</text>`,
  ];
  for (const t of yTicks) {
    const y = _n(fy(t));
    out.push(
      `<line x1="${left}" x2="${right}" y1="${y}" y2="${y}" stroke="#e4e4e4"/>`,
      `<text x="${left - 6}" y="${y}" text-anchor="end" dominant-baseline="middle">${
        _label(t)
      }</text>`,
    );
  }
  for (const t of xTicks) {
    const x = _n(fx(t));
    out.push(
      `<line x1="${x}" x2="${x}" y1="${top}" y2="${bottom}" stroke="#f0f0f0"/>`,
      `<line x1="${x}" x2="${x}" y1="${bottom}" y2="${bottom + 5}" stroke="black"/>`,
      `<text x="${x}" y="${bottom + 18}" text-anchor="middle">${_label(t)}</text>`,
    );
  }
  out.push(
    `<path d="M${left} ${top}V${bottom}H${right}" fill="none" stroke="black"/>`,
    `<text x="${(left + right) / 2}" y="${_HEIGHT - 8}" text-anchor="middle">${
      _esc(xLabel)
    }</text>`,
    `<text transform="translate(16 ${(top + bottom) / 2}) rotate(-90)" text-anchor="middle">${
      _esc(yLabel)
    }</text>`,
  );
  let legendX = left;
  series.forEach((s, i) => {
    const color = _COLORS[i % _COLORS.length];
    const drawn = s.points.filter(([x, y]) => isFinite(x) && isFinite(y));
    const xy = drawn.map(([x, y]) => [_n(fx(x)), _n(fy(y))]);
    out.push(
      `<polyline points="${xy.map((p) => p.join(",")).join(" ")}" fill="none" ` +
        `stroke="${color}" stroke-width="2"/>`,
      ...drawn.map(([x, y], j) =>
        `<circle cx="${xy[j][0]}" cy="${xy[j][1]}" r="3.5" fill="${color}">` +
        `<title>${_esc(s.name)}: ${_label(x)} → ${_label(y)}</title></circle>`
      ),
      `<line x1="${legendX}" x2="${legendX + 18}" y1="40" y2="40" stroke="${color}" ` +
        `stroke-width="2"/>`,
      `<text x="${legendX + 24}" y="40" dominant-baseline="middle">${_esc(s.name)}</text>`,
    );
    legendX += 24 + 7 * s.name.length + 20;
  });
  return out.join("\n");
}

/** About five round ticks covering [min, max] (steps of 1, 2 or 5 × 10^k). */
function _ticks(min: number, max: number): number[] {
  if (!(max > min)) return [min, min + 1];
  const raw = (max - min) / 5, mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].find((m) => m * mag >= raw)! * mag;
  const first = Math.floor(min / step), ticks: number[] = [];
  for (let i = first; ticks.length === 0 || ticks[ticks.length - 1] < max; i++) {
    ticks.push(Number((i * step).toPrecision(12)));
  }
  return ticks;
}

/** Powers of ten covering [min, max]. */
function _logTicks(min: number, max: number): number[] {
  const ticks: number[] = [];
  for (let e = Math.floor(Math.log10(min)); e <= Math.ceil(Math.log10(max)); e++) {
    ticks.push(10 ** e);
  }
  return ticks.length > 1 ? ticks : [ticks[0], ticks[0] * 10];
}

function _label(v: number): string {
  return v.toLocaleString("en-US", { maximumFractionDigits: 2 });
}

function _n(v: number): string {
  return String(Math.round(v * 10) / 10);
}

function _esc(s: string): string {
  return s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}
