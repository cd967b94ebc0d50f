// The page of ./meridian view: Meridian's 3-D map drawn with three.js as GPU point sprites.
//
// Every point is one vertex of one THREE.Points draw call: positions, the previous positions (for animating a new
// frame) and clusters live in typed arrays uploaded as buffer attributes; colours and cluster visibility come from a
// small palette texture indexed by cluster, so toggling a cluster rewrites one texel, not N points. The vertex shader
// rings points whose id is at least `newFrom` (the live map appends new points at the end, so "placed in the last K
// frames" is an id range) in white and, with the outliers toggle on, the points the live map flags as outliers (an
// attribute of 0/1 per point) in red. Picking looks points up in a screen-space grid (16 px cells, built in one pass over the
// points the first time the pointer asks after the view changed: 3-6 ms for 100,000 points, where reading back a
// GPU id pass took 180 ms in SwiftShader), not one DOM node or ray test per point.
// While the view moves (a drag, an animated frame), a frame draws a random sample of the points, sized so that a
// frame takes about FRAME_BUDGET_MS, and the still view gets every point SETTLE_MS after the motion stops: without a
// GPU (Chromium's SwiftShader) 100,000 points cost 80-160 ms a frame on 2 busy cores, a bare WebGL page the same.
//
// The map comes from the server as one binary response (GET api/frame, layout in MapFrame.java); a live map's frames
// are announced by server-sent events (GET api/events) and animated to without reloading.
// ./meridian view --compare A B sends both maps as one frame (MapComparison.java): A's points, then B's laid over A,
// their "clusters" 0 and 1, so the palette colours and the legend toggles the two maps; one THREE.LineSegments draw
// joins each id's two positions.
// window.meridianView exposes the page's own state for the tests and the benchmark (./meridian bench view).

import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';

const MAGIC = 0x3146564d; // "MVF1"
const PICK_CELL = 16; // CSS pixels
const MORPH_MS = 700;
const NONE = 1e9; // newFrom when nothing is highlighted (an id beyond any map)
const SETTLE_MS = 150;
const FRAME_BUDGET_MS = 33;
const MIN_SAMPLE = 5000;
// Tableau 20 without its greys: grey is for points not clustered yet
const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f',
  '#a0cbe8', '#ffbe7d', '#8cd17d', '#b6992d', '#499894', '#d37295', '#fabfd2', '#d4a6c8', '#86bcb6', '#f1ce63',
  '#d7b5a6'];
const UNCLUSTERED = '#8a8f98';

const $ = (id) => document.getElementById(id);
const errors = [];
function fail(message) {
  errors.push(String(message));
  $('status').textContent = String(message);
}
window.addEventListener('error', (e) => fail(e.message));
window.addEventListener('unhandledrejection', (e) => fail(e.reason && e.reason.message ? e.reason.message : e.reason));

// ---- rendering ---------------------------------------------------------------------------------------------------

const container = $('map');
const renderer = new THREE.WebGLRenderer({ antialias: false, powerPreference: 'high-performance' });
renderer.setPixelRatio(Math.min(window.devicePixelRatio || 1, 2));
renderer.setSize(container.clientWidth, container.clientHeight);
renderer.setClearColor(0x14161a, 1);
container.appendChild(renderer.domElement);

const scene = new THREE.Scene();
const markerScene = new THREE.Scene();
const camera = new THREE.PerspectiveCamera(50, container.clientWidth / container.clientHeight, 0.01, 1000);
camera.position.set(0, 0, 10);
const controls = new OrbitControls(camera, renderer.domElement);
controls.zoomToCursor = true;
controls.addEventListener('change', () => {
  lod.lastMotion = performance.now();
  map.drawnAll = false;
  invalidateGrid();
  requestRender();
});
let cameraMoved = false; // by the user: until then each new frame is fitted into view
controls.addEventListener('start', () => {
  cameraMoved = true;
});

let paletteWidth = 256;
let paletteBytes = new Uint8Array(paletteWidth * 4);
let paletteTexture = makePaletteTexture();
function makePaletteTexture() {
  const t = new THREE.DataTexture(paletteBytes, paletteWidth, 1, THREE.RGBAFormat, THREE.UnsignedByteType);
  t.magFilter = THREE.NearestFilter;
  t.minFilter = THREE.NearestFilter;
  t.needsUpdate = true;
  return t;
}

const uniforms = {
  palette: { value: paletteTexture },
  paletteWidth: { value: paletteWidth },
  morph: { value: 1 },
  pointSize: { value: 4 },
  newFrom: { value: NONE },
  showOutliers: { value: 0 },
};

const vertexShader = `
uniform sampler2D palette;
uniform float paletteWidth;
uniform float morph;
uniform float pointSize;
uniform float newFrom;
uniform float showOutliers;
attribute vec3 from;
attribute float cluster;
attribute float outlier;
varying vec3 vColor;
varying float vNew;
varying float vOutlier;
void main() {
  vec4 entry = texture2D(palette, vec2((cluster + 0.5) / paletteWidth, 0.5));
  vNew = 0.0;
  vOutlier = 0.0;
  if (entry.a < 0.5) { // a hidden cluster: outside the clip volume, no fragment
    vColor = vec3(0.0);
    gl_Position = vec4(0.0, 0.0, 2.0, 1.0);
    gl_PointSize = 0.0;
    return;
  }
  gl_Position = projectionMatrix * modelViewMatrix * vec4(mix(from, position, morph), 1.0);
  vNew = float(gl_VertexID) >= newFrom ? 1.0 : 0.0;
  vOutlier = showOutliers * outlier;
  gl_PointSize = pointSize * (1.0 + NEW_SCALE * max(vNew, vOutlier));
  vColor = entry.rgb;
}`;

const fragmentShader = `
varying vec3 vColor;
varying float vNew;
varying float vOutlier;
void main() {
  vec2 d = gl_PointCoord - vec2(0.5);
  float r2 = dot(d, d);
  if (r2 > 0.25) discard;
  vec3 ring = vOutlier > 0.5 ? vec3(1.0, 0.15, 0.15) : vec3(1.0); // an outlier's ring is red, a new point's white
  gl_FragColor = vec4((vNew > 0.5 || vOutlier > 0.5) && r2 > 0.1 ? ring : vColor, 1.0);
}`;

const NEW_SCALE = 0.75; // a new point is drawn this much larger, its ring outside its colour
const drawMaterial = new THREE.ShaderMaterial({
  uniforms, vertexShader, fragmentShader, defines: { NEW_SCALE: NEW_SCALE.toFixed(2) },
});

let capacity = 0;
let geometry = new THREE.BufferGeometry(); // every point: drawArrays over 0..n-1
let sampled = new THREE.BufferGeometry(); // the same attributes through a shuffled index: any prefix is a sample
const points = new THREE.Points(geometry, drawMaterial);
points.frustumCulled = false; // the bounding sphere would have to follow every frame
scene.add(points);

// the selected point: a white ring drawn over everything
const markerGeometry = new THREE.BufferGeometry();
markerGeometry.setAttribute('position', new THREE.BufferAttribute(new Float32Array(3), 3));
const marker = new THREE.Points(markerGeometry, new THREE.ShaderMaterial({
  uniforms: { size: { value: 22 } },
  vertexShader: `uniform float size; void main() {
    gl_Position = projectionMatrix * modelViewMatrix * vec4(position, 1.0); gl_PointSize = size; }`,
  fragmentShader: `void main() { vec2 d = gl_PointCoord - vec2(0.5); float r = length(d);
    if (r > 0.5 || r < 0.36) discard; gl_FragColor = vec4(1.0); }`,
  depthTest: false,
}));
marker.frustumCulled = false;
marker.visible = false;
markerScene.add(marker);

// --compare: a segment from each shared id's position in A to its position in B
const segments = new THREE.LineSegments(new THREE.BufferGeometry(), new THREE.LineBasicMaterial({
  color: 0xc8ccd4, transparent: true, opacity: 0.55,
}));
segments.frustumCulled = false;
segments.visible = false;
scene.add(segments);

// the screen-space grid of drawn points for picking: heads[cell] -> first point, next[point] -> the next in its cell
const grid = { valid: false, cols: 0, rows: 0, heads: new Int32Array(0), next: new Int32Array(0),
  sx: new Float32Array(0), sy: new Float32Array(0), depth: new Float32Array(0), builtMs: 0 };

// ---- the map's state -----------------------------------------------------------------------------------------------

const map = {
  meta: null, n: 0, seq: 0, frame: null, to: null, from: null, cluster: null, labels: new Int32Array(0),
  outlier: null, outliers: 0,
  sizes: new Map(), hidden: new Set(), history: [], newFrom: NONE, selected: -1, hover: null,
  framesLoaded: 0, renders: 0, drawn: 0, drawnAll: false, loadMs: null, lastApplyMs: null, morphStart: null,
  fitted: false, order: null,
};
// --compare: meta.compare of the frame (null for one map), and whether the segments are asked for
const compare = { meta: null, segments: true };
// the sample drawn while the view moves: its size adapts to the frame budget
const lod = { points: 20000, lastMotion: -Infinity, lastFrameAt: -Infinity, lastSampled: false, settle: null };

function allocate(n) {
  if (n <= capacity) {
    return;
  }
  const cap = Math.max(n, 2 * capacity, 1024);
  const to = new Float32Array(3 * cap);
  const from = new Float32Array(3 * cap);
  const cluster = new Float32Array(cap);
  const outlier = new Float32Array(cap);
  const order = new Uint32Array(cap);
  if (map.to) {
    to.set(map.to.subarray(0, 3 * map.n));
    from.set(map.from.subarray(0, 3 * map.n));
    cluster.set(map.cluster.subarray(0, map.n));
    outlier.set(map.outlier.subarray(0, map.n));
    order.set(map.order.subarray(0, map.n));
  }
  const g = new THREE.BufferGeometry();
  g.setAttribute('position', new THREE.BufferAttribute(to, 3).setUsage(THREE.DynamicDrawUsage));
  g.setAttribute('from', new THREE.BufferAttribute(from, 3).setUsage(THREE.DynamicDrawUsage));
  g.setAttribute('cluster', new THREE.BufferAttribute(cluster, 1).setUsage(THREE.DynamicDrawUsage));
  g.setAttribute('outlier', new THREE.BufferAttribute(outlier, 1).setUsage(THREE.DynamicDrawUsage));
  const s = new THREE.BufferGeometry();
  for (const name of ['position', 'from', 'cluster', 'outlier']) {
    s.setAttribute(name, g.getAttribute(name));
  }
  s.setIndex(new THREE.BufferAttribute(order, 1).setUsage(THREE.DynamicDrawUsage));
  geometry.dispose();
  sampled.dispose();
  geometry = g;
  sampled = s;
  points.geometry = g;
  map.to = to;
  map.from = from;
  map.cluster = cluster;
  map.outlier = outlier;
  map.order = order;
  capacity = cap;
}

/**
 * Puts ids from..n-1 into the shuffled order (Fisher-Yates inside out: 0..n-1 stays a uniform random permutation, so
 * any prefix is a uniform sample, and the points sampled before a frame mostly stay sampled after it).
 */
function shuffleIn(from, n) {
  const order = map.order;
  if (from > n) {
    from = 0; // a smaller map (another run of the topology): shuffle anew
  }
  for (let i = from; i < n; i++) {
    const j = Math.floor(Math.random() * (i + 1));
    order[i] = order[j];
    order[j] = i;
  }
  const index = sampled.index;
  index.clearUpdateRanges();
  index.addUpdateRange(0, n);
  index.needsUpdate = true;
}

function upload(name, count) {
  const a = geometry.getAttribute(name);
  a.clearUpdateRanges();
  a.addUpdateRange(0, count * a.itemSize);
  a.needsUpdate = true;
}

/**
 * Shows a frame: positions animate from where the points are drawn now; new points appear in place. outliers: a
 * byte per point, 1 for an outlier.
 */
function apply(meta, xyz, labels, outliers) {
  const t0 = performance.now();
  const n = meta.n;
  const previous = map.n;
  allocate(n);
  const m = map.morphStart === null ? 1 : uniforms.morph.value;
  const { to, from, cluster, outlier } = map;
  const kept = 3 * Math.min(previous, n);
  for (let i = 0; i < kept; i++) {
    from[i] += (to[i] - from[i]) * m;
  }
  from.set(xyz.subarray(kept), kept);
  to.set(xyz);
  let outlierCount = 0;
  for (let i = 0; i < n; i++) {
    cluster[i] = labels[i] + 1;
    outlier[i] = outliers[i];
    outlierCount += outliers[i];
  }
  map.labels = Int32Array.from(labels);
  map.outliers = outlierCount;
  upload('position', n);
  upload('from', n);
  upload('cluster', n);
  upload('outlier', n);
  shuffleIn(previous, n);
  geometry.setDrawRange(0, n);
  const animate = previous > 0 && meta.mode === 'live';
  uniforms.morph.value = animate ? 0 : 1;
  map.morphStart = animate ? performance.now() : null;
  map.meta = meta;
  map.n = n;
  map.seq = meta.seq;
  map.frame = meta.frame;
  mergeHistory(meta.history || []);
  map.framesLoaded++;
  map.drawnAll = false; // until a frame draws every point of this map
  applyCompare(meta.compare || null);
  invalidateGrid();
  countClusters();
  updatePalette();
  updateLegend();
  updateNewSince();
  updateFigures();
  if (!$('size').dataset.touched && n > 0) {
    setPointSize(n <= 2000 ? 6 : n <= 20000 ? 4 : 3);
  }
  if ((!map.fitted || !cameraMoved) && n > 0) {
    fit(); // the map's extent at its new positions; the camera jumps while the points glide
    map.fitted = true;
  } else {
    keepInDepthRange();
  }
  if (map.selected >= n) {
    select(-1, false);
  }
  map.lastApplyMs = performance.now() - t0;
  $('status').textContent = '';
  requestRender();
}

function mergeHistory(entries) {
  const byFrame = new Map(map.history.map((e) => [e[0], e]));
  for (const e of entries) {
    byFrame.set(e[0], e);
  }
  map.history = [...byFrame.values()].sort((a, b) => a[0] - b[0]).slice(-256);
}

function countClusters() {
  const sizes = new Map();
  const labels = map.labels;
  for (let i = 0; i < labels.length; i++) {
    sizes.set(labels[i], (sizes.get(labels[i]) || 0) + 1);
  }
  map.sizes = new Map([...sizes.entries()].sort((a, b) => (a[0] < 0) - (b[0] < 0) || a[0] - b[0]));
}

function colorOf(label) {
  if (label < 0) {
    return UNCLUSTERED;
  }
  if (label < PALETTE.length) {
    return PALETTE[label];
  }
  return hslHex((label * 137.508) % 360, 0.62, 0.6); // golden-angle hues beyond the palette
}

function hslHex(h, s, l) {
  const f = (k) => {
    const a = s * Math.min(l, 1 - l);
    const kk = (k + h / 30) % 12;
    return Math.round(255 * (l - a * Math.max(-1, Math.min(kk - 3, 9 - kk, 1))));
  };
  return '#' + [f(0), f(8), f(4)].map((v) => v.toString(16).padStart(2, '0')).join('');
}

function updatePalette() {
  let maxLabel = -1;
  for (const label of map.sizes.keys()) {
    maxLabel = Math.max(maxLabel, label);
  }
  if (maxLabel + 2 > paletteWidth) {
    while (paletteWidth < maxLabel + 2) {
      paletteWidth *= 2;
    }
    paletteBytes = new Uint8Array(paletteWidth * 4);
    paletteTexture.dispose();
    paletteTexture = makePaletteTexture();
    uniforms.palette.value = paletteTexture;
    uniforms.paletteWidth.value = paletteWidth;
  }
  for (let label = -1; label <= maxLabel; label++) {
    const hex = colorOf(label);
    const o = 4 * (label + 1);
    paletteBytes[o] = parseInt(hex.slice(1, 3), 16);
    paletteBytes[o + 1] = parseInt(hex.slice(3, 5), 16);
    paletteBytes[o + 2] = parseInt(hex.slice(5, 7), 16);
    paletteBytes[o + 3] = map.hidden.has(label) ? 0 : 255;
  }
  paletteTexture.needsUpdate = true;
}

// ---- camera --------------------------------------------------------------------------------------------------------

function bounds() {
  const { to, n } = map;
  const c = new THREE.Vector3();
  for (let i = 0; i < n; i++) {
    c.x += to[3 * i];
    c.y += to[3 * i + 1];
    c.z += to[3 * i + 2];
  }
  c.divideScalar(Math.max(1, n));
  let r2 = 0;
  for (let i = 0; i < n; i++) {
    const dx = to[3 * i] - c.x;
    const dy = to[3 * i + 1] - c.y;
    const dz = to[3 * i + 2] - c.z;
    r2 = Math.max(r2, dx * dx + dy * dy + dz * dz);
  }
  return { center: c, radius: Math.max(Math.sqrt(r2), 1e-6) };
}

function fit() {
  const { center, radius } = bounds();
  const distance = radius / Math.sin(THREE.MathUtils.degToRad(camera.fov / 2)) * 1.15;
  const direction = camera.position.clone().sub(controls.target).normalize();
  if (direction.lengthSq() === 0) {
    direction.set(0, 0, 1);
  }
  controls.target.copy(center);
  camera.position.copy(center).addScaledVector(direction, distance);
  camera.near = distance / 1000;
  camera.far = distance + radius * 20;
  camera.updateProjectionMatrix();
  controls.maxDistance = distance * 20;
  controls.update();
  requestRender();
}

function keepInDepthRange() {
  const { center, radius } = bounds();
  const far = camera.position.distanceTo(center) + radius * 20;
  if (far > camera.far) {
    camera.far = far;
    camera.updateProjectionMatrix();
  }
}

function resize() {
  camera.aspect = container.clientWidth / container.clientHeight;
  camera.updateProjectionMatrix();
  renderer.setSize(container.clientWidth, container.clientHeight);
  invalidateGrid();
  requestRender();
}
window.addEventListener('resize', resize);

function setPointSize(px) {
  $('size').value = px;
  uniforms.pointSize.value = px * renderer.getPixelRatio();
  marker.material.uniforms.size.value = Math.max(14, px * 3) * renderer.getPixelRatio();
  requestRender();
}

// ---- drawing -------------------------------------------------------------------------------------------------------

let renderPending = false;
let benchmarking = false;
function requestRender() {
  if (!renderPending && !benchmarking) {
    renderPending = true;
    requestAnimationFrame(drawFrame);
  }
}

function drawFrame(now) {
  renderPending = false;
  if (map.morphStart !== null) {
    const t = Math.min(1, (now - map.morphStart) / MORPH_MS);
    uniforms.morph.value = t < 1 ? 1 - Math.pow(1 - t, 3) : 1;
    invalidateGrid();
    if (t >= 1) {
      map.morphStart = null;
    } else {
      requestRender();
    }
  }
  const moving = map.morphStart !== null || now - lod.lastMotion < SETTLE_MS;
  render(moving, now);
  if (moving) {
    clearTimeout(lod.settle); // the full frame once the view is still
    lod.settle = setTimeout(requestRender, SETTLE_MS);
  }
  if (hoverAt) {
    hover();
  }
}

/**
 * Draws the map: every point, or while the view moves (moving) a sample sized from the time between the last
 * sampled frames (now: this animation frame's time), so that a frame takes about FRAME_BUDGET_MS.
 */
function render(moving = false, now = performance.now()) {
  if (marker.visible) {
    markerGeometry.attributes.position.array.set(position(map.selected));
    markerGeometry.attributes.position.needsUpdate = true;
  }
  let sample = moving && map.n > lod.points;
  if (moving && lod.lastSampled && now - lod.lastFrameAt < 250) {
    const factor = Math.min(1.25, Math.max(0.75, FRAME_BUDGET_MS / Math.max(1, now - lod.lastFrameAt)));
    lod.points = Math.round(Math.min(Math.max(lod.points * factor, MIN_SAMPLE), Math.max(map.n, MIN_SAMPLE)));
    sample = map.n > lod.points;
  }
  if (sample) {
    sampled.setDrawRange(0, lod.points);
    points.geometry = sampled;
  } else {
    points.geometry = geometry;
  }
  lod.lastSampled = moving;
  lod.lastFrameAt = now;
  renderer.render(scene, camera);
  map.drawn = renderer.info.render.points;
  map.drawnAll = !sample;
  map.renders++;
  if (marker.visible) {
    renderer.autoClear = false;
    renderer.render(markerScene, camera);
    renderer.autoClear = true;
  }
  if (map.loadMs === null && map.n > 0) {
    map.loadMs = performance.now(); // since navigation started
  }
}

/** Where point id is drawn now (between its previous and its new position while a frame animates). */
function position(id) {
  const m = uniforms.morph.value;
  const out = [0, 0, 0];
  for (let k = 0; k < 3; k++) {
    const a = map.from[3 * id + k];
    out[k] = a + (map.to[3 * id + k] - a) * m;
  }
  return out;
}

/**
 * Projects every drawn point (hidden clusters left out, positions as drawn now) into the grid. Runs when a pick needs
 * it after the view, the map, the animation or the hidden clusters changed.
 */
function buildGrid() {
  const t0 = performance.now();
  const w = container.clientWidth;
  const h = container.clientHeight;
  const cols = Math.max(1, Math.ceil(w / PICK_CELL));
  const rows = Math.max(1, Math.ceil(h / PICK_CELL));
  const n = map.n;
  if (grid.heads.length < cols * rows) {
    grid.heads = new Int32Array(cols * rows);
  }
  if (grid.next.length < n) {
    grid.next = new Int32Array(capacity);
    grid.sx = new Float32Array(capacity);
    grid.sy = new Float32Array(capacity);
    grid.depth = new Float32Array(capacity);
  }
  const { heads, next, sx, sy, depth } = grid;
  heads.fill(-1, 0, cols * rows);
  camera.updateMatrixWorld();
  const e = new THREE.Matrix4().multiplyMatrices(camera.projectionMatrix, camera.matrixWorldInverse).elements;
  const { from, to, labels } = map;
  const m = uniforms.morph.value;
  const hidden = map.hidden;
  for (let i = 0; i < n; i++) {
    if (hidden.size > 0 && hidden.has(labels[i])) {
      continue;
    }
    const x = from[3 * i] + (to[3 * i] - from[3 * i]) * m;
    const y = from[3 * i + 1] + (to[3 * i + 1] - from[3 * i + 1]) * m;
    const z = from[3 * i + 2] + (to[3 * i + 2] - from[3 * i + 2]) * m;
    const cw = e[3] * x + e[7] * y + e[11] * z + e[15];
    if (cw <= 0) {
      continue;
    }
    const nz = (e[2] * x + e[6] * y + e[10] * z + e[14]) / cw;
    const px = ((e[0] * x + e[4] * y + e[8] * z + e[12]) / cw + 1) * 0.5 * w;
    const py = (1 - (e[1] * x + e[5] * y + e[9] * z + e[13]) / cw) * 0.5 * h;
    if (nz < -1 || nz > 1 || px < -PICK_CELL || py < -PICK_CELL || px > w + PICK_CELL || py > h + PICK_CELL) {
      continue;
    }
    const cx = Math.min(cols - 1, Math.max(0, Math.floor(px / PICK_CELL)));
    const cy = Math.min(rows - 1, Math.max(0, Math.floor(py / PICK_CELL)));
    const c = cy * cols + cx;
    next[i] = heads[c];
    heads[c] = i;
    sx[i] = px;
    sy[i] = py;
    depth[i] = nz;
  }
  grid.cols = cols;
  grid.rows = rows;
  grid.valid = true;
  grid.builtMs = performance.now() - t0;
}

function invalidateGrid() {
  grid.valid = false;
}

/**
 * The id of the point drawn at CSS pixel (x, y): of the points whose disc covers it the nearest to the camera (what
 * the depth test shows), else the nearest within 4 pixels; -1 if none.
 */
function pick(x, y) {
  if (map.n === 0) {
    return -1;
  }
  if (!grid.valid) {
    buildGrid();
  }
  const radius = uniforms.pointSize.value / renderer.getPixelRatio() / 2;
  const reach = Math.max(4, radius * (1 + NEW_SCALE));
  const { cols, rows, heads, next, sx, sy, depth } = grid;
  let covering = -1;
  let nearest = -1;
  let nearestD = 16;
  const top = Math.max(0, Math.floor((y - reach) / PICK_CELL));
  const bottom = Math.min(rows - 1, Math.floor((y + reach) / PICK_CELL));
  const left = Math.max(0, Math.floor((x - reach) / PICK_CELL));
  const right = Math.min(cols - 1, Math.floor((x + reach) / PICK_CELL));
  for (let cy = top; cy <= bottom; cy++) {
    for (let cx = left; cx <= right; cx++) {
      for (let i = heads[cy * cols + cx]; i >= 0; i = next[i]) {
        const d2 = (sx[i] - x) ** 2 + (sy[i] - y) ** 2;
        const r = i >= map.newFrom ? radius * (1 + NEW_SCALE) : radius;
        if (d2 <= r * r) {
          if (covering < 0 || depth[i] < depth[covering]) {
            covering = i;
          }
        } else if (d2 < nearestD) {
          nearest = i;
          nearestD = d2;
        }
      }
    }
  }
  return covering >= 0 ? covering : nearest;
}

// ---- interaction ---------------------------------------------------------------------------------------------------

let hoverAt = null;
let downAt = null;
const tip = $('tip');

renderer.domElement.addEventListener('pointermove', (e) => {
  if (e.buttons) {
    tip.hidden = true;
    return;
  }
  hoverAt = { x: e.offsetX, y: e.offsetY };
  requestRender();
});
renderer.domElement.addEventListener('pointerleave', () => {
  hoverAt = null;
  map.hover = null;
  tip.hidden = true;
});
renderer.domElement.addEventListener('pointerdown', (e) => {
  downAt = { x: e.offsetX, y: e.offsetY };
});
renderer.domElement.addEventListener('pointerup', (e) => {
  if (downAt && Math.hypot(e.offsetX - downAt.x, e.offsetY - downAt.y) < 4) {
    select(pick(e.offsetX, e.offsetY), false);
  }
  downAt = null;
});

function hover() {
  const { x, y } = hoverAt;
  hoverAt = null;
  const id = pick(x, y);
  if (id < 0) {
    map.hover = null;
    tip.hidden = true;
    return;
  }
  map.hover = { id, cluster: map.labels[id] };
  tip.textContent = describe(id);
  tip.style.left = `${x + 14}px`;
  tip.style.top = `${y + 10}px`;
  tip.hidden = false;
}

function clusterName(label) {
  if (compare.meta) {
    return label === 0 ? 'A' : compare.meta.moved ? 'B, aligned to A' : 'B';
  }
  return label < 0 ? 'not clustered' : `cluster ${label}`;
}

/** ' · outlier' for a point the map flags. */
function outlierNote(i) {
  return !compare.meta && map.outlier && i < map.n && map.outlier[i] > 0 ? ' · outlier' : '';
}

/** Point i of the page named for a user: its id in its own map and, comparing, which map and how far it moved. */
function describe(i) {
  const label = map.labels[i];
  if (!compare.meta) {
    return `id ${i} · ${clusterName(label)}${outlierNote(i)}`;
  }
  const id = mapId(i);
  const moved = id < compare.meta.shared ? ` · ${fmt(displacement(id), 4)} apart` : ' · in one map only';
  return `id ${id} · ${clusterName(label)}${moved}`;
}

/** Selects point id (-1: none), shows its figures and, with center, turns the view around it. */
function select(id, center) {
  map.selected = id >= 0 && id < map.n ? id : -1;
  const info = $('info');
  if (map.selected < 0) {
    info.hidden = true;
    marker.visible = false;
    requestRender();
    return;
  }
  const p = position(map.selected);
  const label = map.labels[map.selected];
  info.hidden = false;
  info.textContent = `${describe(map.selected)}${map.hidden.has(label) ? ' (hidden)' : ''}`
    + ` · (${p.map((v) => v.toPrecision(4)).join(', ')})`;
  marker.visible = true;
  if (center) {
    cameraMoved = true;
    const delta = new THREE.Vector3(...p).sub(controls.target);
    controls.target.add(delta);
    camera.position.add(delta);
    controls.update();
  }
  requestRender();
}

$('search').addEventListener('change', (e) => {
  const text = e.target.value.trim();
  if (text === '') {
    select(-1, false);
    $('message').textContent = '';
    return;
  }
  const id = Number(text);
  const last = compare.meta ? Math.max(compare.meta.referenceN, compare.meta.mapN) - 1 : map.n - 1;
  if (!Number.isInteger(id) || id < 0 || id > last) {
    $('message').textContent = `no point ${text} (ids 0..${last})`;
    return;
  }
  $('message').textContent = '';
  select(compare.meta && id >= compare.meta.referenceN ? pageIndex(id, 1) : id, true); // comparing: A's point
});

$('since').addEventListener('change', () => {
  updateNewSince();
  requestRender();
});
$('outliers').addEventListener('change', (e) => {
  uniforms.showOutliers.value = e.target.checked ? 1 : 0;
  requestRender();
});
$('size').addEventListener('input', (e) => {
  e.target.dataset.touched = '1';
  setPointSize(Number(e.target.value));
});
function refit() {
  cameraMoved = false; // and the frames to come are fitted too, until the user turns the view
  fit();
}
$('fit').addEventListener('click', refit);
window.addEventListener('keydown', (e) => {
  if (e.key === 'f' && e.target.tagName !== 'INPUT') {
    refit();
  }
});
$('png').addEventListener('click', () => {
  const a = document.createElement('a');
  a.href = exportPng();
  a.download = `meridian-map${map.frame === null || map.frame === undefined ? '' : '-frame-' + map.frame}.png`;
  document.body.appendChild(a);
  a.click();
  a.remove();
});
$('all').addEventListener('click', () => setHidden([]));
$('none').addEventListener('click', () => setHidden([...map.sizes.keys()]));

function toggleCluster(label) {
  const hidden = new Set(map.hidden);
  if (hidden.has(label)) {
    hidden.delete(label);
  } else {
    hidden.add(label);
  }
  setHidden([...hidden]);
}

function setHidden(labels) {
  map.hidden = new Set(labels);
  updateSegments();
  invalidateGrid();
  updatePalette();
  updateLegend();
  if (map.selected >= 0) {
    select(map.selected, false);
  }
  requestRender();
}

/** The view as a PNG data URL: the map and a caption with its figures. */
function exportPng() {
  render(); // read back in the same task, before the browser may discard the drawing buffer
  const source = renderer.domElement;
  const c = document.createElement('canvas');
  c.width = source.width;
  c.height = source.height;
  const ctx = c.getContext('2d');
  ctx.drawImage(source, 0, 0);
  const dpr = renderer.getPixelRatio();
  ctx.font = `${12 * dpr}px "DejaVu Sans", sans-serif`;
  ctx.fillStyle = '#e6e6e6';
  ctx.fillText(caption(), 8 * dpr, c.height - 8 * dpr);
  return c.toDataURL('image/png');
}

// ---- panels --------------------------------------------------------------------------------------------------------

function updateLegend() {
  const ul = $('clusters');
  ul.replaceChildren();
  for (const [label, size] of map.sizes) {
    const li = document.createElement('li');
    li.dataset.cluster = label;
    li.className = map.hidden.has(label) ? 'off' : '';
    li.title = 'click: show / hide';
    const swatch = document.createElement('span');
    swatch.className = 'swatch';
    swatch.style.background = colorOf(label);
    swatch.style.borderColor = colorOf(label);
    const count = document.createElement('span');
    count.className = 'count';
    count.textContent = size.toLocaleString('en');
    li.append(swatch, clusterName(label), count);
    li.addEventListener('click', () => toggleCluster(label));
    ul.appendChild(li);
  }
}

function updateNewSince() {
  const k = Number($('since').value);
  $('since').disabled = map.frame === null || map.frame === undefined; // a batch map has no frames
  let from = NONE;
  if (k > 0 && map.frame !== null && map.frame !== undefined && map.history.length > 0) {
    const recent = map.history.filter((e) => e[0] > map.frame - k && e[0] <= map.frame);
    if (recent.length > 0) {
      from = Math.max(0, recent[0][1] - recent[0][2]); // N before the oldest of the last k frames
    }
    if (from === 0) {
      from = NONE; // every point is new (the map's first frames): nothing stands out
    }
  }
  map.newFrom = from;
  uniforms.newFrom.value = from;
  const count = from >= NONE ? 0 : Math.max(0, map.n - from);
  $('since').title = `${count} points placed in the last ${k} frame(s) have a white ring`;
}

function fmt(v, digits) {
  return v === null || v === undefined || !Number.isFinite(Number(v)) ? '–' : Number(v).toPrecision(digits);
}

function updateFigures() {
  const meta = map.meta;
  if (compare.meta) {
    const c = compare.meta;
    $('frame').textContent = 'compare';
    $('n').textContent = `${c.referenceN.toLocaleString('en')} · ${c.mapN.toLocaleString('en')}`;
    $('n').title = 'points of A · of B';
    $('stress').textContent = '–';
    $('temperature').textContent = '–';
    $('clusterCount').textContent = '–';
    $('outlierCount').textContent = '–';
    $('source').textContent = `A ${c.reference} · B ${c.map}`;
    updateMode();
    return;
  }
  $('n').title = '';
  $('frame').textContent = meta.frame === null || meta.frame === undefined ? 'batch' : meta.frame;
  $('n').textContent = meta.n.toLocaleString('en');
  $('stress').textContent = fmt(meta.stress, 5);
  $('temperature').textContent = fmt(meta.temperature, 4);
  $('clusterCount').textContent = meta.clusterCount;
  $('outlierCount').textContent = map.outliers.toLocaleString('en');
  $('outliers').title = `${map.outliers} points in DA-VS's sponge (the live map's outlier flag) get a red ring`;
  $('source').textContent = (meta.job ? `job ${meta.job} · ` : '') + meta.points
    + (meta.clusters && meta.mode === 'batch' ? ' + ' + meta.clusters : '')
    + (meta.framesUnreadable ? ` · ${meta.framesUnreadable} frame(s) unreadable` : '');
  updateMode();
}

function updateMode() {
  const meta = map.meta;
  const mode = $('mode');
  if (!meta) {
    return;
  }
  mode.className = meta.mode === 'live' ? (events && events.readyState === 2 ? 'stale' : 'live') : '';
  let text = meta.mode;
  if (meta.mode === 'live' && meta.publishedAtMs) {
    text += ` · ${Math.max(0, Math.round((Date.now() - meta.publishedAtMs) / 1000))} s ago`;
  }
  mode.textContent = text;
}
setInterval(updateMode, 1000);

function caption() {
  const meta = map.meta || {};
  if (compare.meta) {
    const c = compare.meta;
    return `Meridian maps compared · A: ${c.reference} (N = ${c.referenceN}) · B${c.moved ? ' aligned' : ''}:`
      + ` ${c.map} (N = ${c.mapN}) · residual RMS ${fmt(c.rmsResidual, 4)} over ${c.shared} shared ids`;
  }
  return `Meridian map · ${meta.frame === null || meta.frame === undefined ? 'batch' : 'frame ' + meta.frame}`
    + ` · N = ${map.n} · stress ${fmt(meta.stress, 5)} · temperature ${fmt(meta.temperature, 4)}`
    + ` · ${meta.clusterCount || 0} clusters`;
}

// ---- comparing two maps --------------------------------------------------------------------------------------------

/** Page index of the point with id in map 0 (A) or 1 (B). */
function pageIndex(id, which) {
  return which === 0 ? id : compare.meta.referenceN + id;
}

/** The id in its own map of page point i. */
function mapId(i) {
  return compare.meta && i >= compare.meta.referenceN ? i - compare.meta.referenceN : i;
}

/** How far apart a shared id's two positions are drawn. */
function displacement(id) {
  const a = 3 * id;
  const b = 3 * pageIndex(id, 1);
  return Math.hypot(map.to[b] - map.to[a], map.to[b + 1] - map.to[a + 1], map.to[b + 2] - map.to[a + 2]);
}

/** Sets up (or, for one map, takes down) the segments and the legend's comparison of a new frame. */
function applyCompare(c) {
  compare.meta = c;
  $('compare').hidden = !c;
  $('legendTitle').textContent = c ? 'maps' : 'clusters';
  segments.geometry.dispose();
  segments.geometry = new THREE.BufferGeometry();
  if (!c) {
    updateSegments();
    return;
  }
  const xyz = new Float32Array(6 * c.shared);
  for (let id = 0; id < c.shared; id++) {
    xyz.set(map.to.subarray(3 * id, 3 * id + 3), 6 * id);
    xyz.set(map.to.subarray(3 * pageIndex(id, 1), 3 * pageIndex(id, 1) + 3), 6 * id + 3);
  }
  segments.geometry.setAttribute('position', new THREE.BufferAttribute(xyz, 3));
  $('transform').textContent = `${c.moved ? 'B moved onto A' : 'B already aligned to A, shown as given'}:`
    + ` scale ${fmt(c.scale, 6)}, ${c.reflection ? 'reflection' : 'rotation'}`;
  $('residual').textContent = `residual RMS ${fmt(c.rmsResidual, 4)} over ${c.shared.toLocaleString('en')} shared ids`;
  $('compareNote').textContent = c.note;
  const ul = $('largest');
  ul.replaceChildren();
  for (const [id, d] of c.largest) {
    const li = document.createElement('li');
    li.dataset.id = id;
    li.title = 'click: select it in A';
    const count = document.createElement('span');
    count.className = 'count';
    count.textContent = fmt(d, 4);
    li.append(`id ${id}`, count);
    li.addEventListener('click', () => select(id, true));
    ul.appendChild(li);
  }
  updateSegments();
}

function updateSegments() {
  compare.segments = $('segments').checked;
  segments.visible = compare.meta !== null && compare.segments && !map.hidden.has(0) && !map.hidden.has(1);
  requestRender();
}
$('segments').addEventListener('change', updateSegments);

// ---- loading -------------------------------------------------------------------------------------------------------

let events = null;
let loading = false;
let again = false;

async function load() {
  if (loading) {
    again = true;
    return;
  }
  loading = true;
  try {
    do {
      again = false;
      const response = await fetch('api/frame', { cache: 'no-store' });
      if (response.status === 503) {
        $('status').textContent = 'waiting for the live map\'s first frame …';
        follow();
        return;
      }
      if (!response.ok) {
        throw new Error(`GET api/frame: HTTP ${response.status}`);
      }
      const buffer = await response.arrayBuffer();
      const view = new DataView(buffer);
      if (buffer.byteLength < 8 || view.getUint32(0, true) !== MAGIC) {
        throw new Error('GET api/frame: not a Meridian frame');
      }
      const length = view.getUint32(4, true);
      const meta = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 8, length)));
      const offset = 8 + ((length + 3) & ~3);
      if (meta.seq !== map.seq) {
        apply(meta, new Float32Array(buffer, offset, 3 * meta.n), new Int32Array(buffer, offset + 12 * meta.n, meta.n),
          new Uint8Array(buffer, offset + 16 * meta.n, meta.n));
      }
      if (meta.mode === 'live') {
        follow();
      }
    } while (again);
  } finally {
    loading = false;
  }
}

/** Server-sent events announce each new frame (only a live map has any after the first). */
function follow() {
  if (events) {
    return;
  }
  events = new EventSource('api/events');
  events.onmessage = (e) => {
    const announced = JSON.parse(e.data);
    if (announced.seq !== map.seq) {
      load().catch((err) => fail(err.message));
    }
  };
  events.onerror = () => updateMode();
  events.onopen = () => updateMode();
}

/** The WebGL implementation drawing the page (e.g. SwiftShader, Chromium's software renderer, without a GPU). */
function glRenderer() {
  const gl = renderer.getContext();
  const info = gl.getExtension('WEBGL_debug_renderer_info');
  return info ? gl.getParameter(info.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER);
}

// ---- for tests and ./meridian bench view ---------------------------------------------------------------------------

/**
 * Renders every animation frame for ms milliseconds while the camera turns: every point each frame, or with sample
 * the points a moving view draws (as a user's drag); frames per second, frame times, points per frame, and the time
 * of one pick at the centre (it reads pixels back, so it waits for the GPU: what a full pass of the vertices costs).
 */
function benchmark({ ms = 4000, showPoints = true, sample = false } = {}) {
  benchmarking = true;
  points.visible = showPoints;
  const times = [];
  let drawn = 0;
  const offset = camera.position.clone().sub(controls.target);
  const up = new THREE.Vector3(0, 1, 0);
  return new Promise((resolve) => {
    let start = null;
    let last = null;
    function step(now) {
      if (start === null) {
        start = now;
      } else {
        times.push(now - last);
      }
      last = now;
      offset.applyAxisAngle(up, 0.01);
      camera.position.copy(controls.target).add(offset);
      camera.lookAt(controls.target);
      invalidateGrid();
      render(sample, now);
      drawn += showPoints ? map.drawn : 0;
      if (now - start < ms) {
        requestAnimationFrame(step);
        return;
      }
      benchmarking = false;
      points.visible = true;
      invalidateGrid();
      let t0 = performance.now();
      const picked = pick(container.clientWidth / 2, container.clientHeight / 2);
      const pickMs = performance.now() - t0; // with the grid's build
      t0 = performance.now();
      pick(container.clientWidth / 2 + 3, container.clientHeight / 2 + 3);
      const pickCachedMs = performance.now() - t0;
      controls.update();
      requestRender();
      const sorted = [...times].sort((a, b) => a - b);
      const seconds = (last - start) / 1000;
      resolve({
        frames: times.length, seconds, fps: times.length / seconds, drawn: showPoints ? map.drawn : 0,
        drawnPerFrame: drawn / (times.length + 1), p50Ms: sorted[Math.floor(sorted.length * 0.5)],
        p95Ms: sorted[Math.floor(sorted.length * 0.95)], pickMs, pickCachedMs, picked,
      });
    }
    requestAnimationFrame(step);
  });
}

window.meridianView = {
  state() {
    let visible = 0;
    for (const [label, size] of map.sizes) {
      visible += map.hidden.has(label) ? 0 : size;
    }
    return {
      ready: map.renders > 0 && map.framesLoaded > 0 && map.morphStart === null && !loading && map.drawnAll,
      mode: map.meta ? map.meta.mode : null, seq: map.seq, frame: map.frame, n: map.n, drawn: map.drawn, visible,
      drawnAll: map.drawnAll, samplePoints: lod.points,
      clusters: [...map.sizes].map(([label, size]) => ({
        label, size, visible: !map.hidden.has(label), color: colorOf(label),
      })),
      newFrom: map.newFrom >= NONE ? -1 : map.newFrom,
      newCount: map.newFrom >= NONE ? 0 : Math.max(0, map.n - map.newFrom),
      outliers: map.outliers, outliersShown: uniforms.showOutliers.value === 1,
      selected: map.selected, hover: map.hover, framesLoaded: map.framesLoaded, renders: map.renders,
      animating: map.morphStart !== null, loadMs: map.loadMs, lastApplyMs: map.lastApplyMs, errors: [...errors],
      following: events !== null && events.readyState === 1,
      compare: compare.meta === null ? null : {
        shared: compare.meta.shared, segments: segments.geometry.getAttribute('position').count / 2,
        segmentsVisible: segments.visible, residual: $('residual').textContent,
        largest: [...$('largest').children].map((li) => Number(li.dataset.id)),
      },
    };
  },
  position,
  select,
  toggleCluster,
  pick,
  exportPng,
  benchmark,
  glRenderer,
};

setPointSize(4);
load().catch((err) => fail(err.message));
