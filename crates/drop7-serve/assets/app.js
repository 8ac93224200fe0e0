// drop7 serve: the page. Plain script, no dependencies. The server is stateless: a game is
// its seed and the columns played ("moves", one digit per move).
'use strict';

const $ = (s, el = document) => el.querySelector(s);
const $$ = (s, el = document) => [...el.querySelectorAll(s)];
const fmt = (x) => (x === null || x === undefined ? '–' : Math.round(x).toLocaleString('en-US'));
const signed = (x) => (x > 0 ? '+' : '') + fmt(x);
const enc = encodeURIComponent;

let busy = 0;
function setBusy(d) {
  busy += d;
  document.body.dataset.busy = String(busy);
}

function showError(message) {
  const e = $('#error');
  e.textContent = message;
  e.hidden = false;
  document.body.dataset.lastError = message;
  clearTimeout(showError.timer);
  showError.timer = setTimeout(() => { e.hidden = true; }, 10000);
}

async function api(path, opts) {
  setBusy(1);
  try {
    const r = await fetch(path, opts);
    const kind = r.headers.get('content-type') || '';
    const body = kind.startsWith('application/json') ? await r.json() : await r.text();
    if (!r.ok) throw new Error(body && body.error ? body.error : `HTTP ${r.status}`);
    return body;
  } catch (e) {
    showError(e.message);
    throw e;
  } finally {
    setBusy(-1);
  }
}

function el(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (v !== null && v !== undefined) e.setAttribute(k, v);
  }
  for (const k of kids) e.append(k);
  return e;
}

// ---------------------------------------------------------------- boards

function renderBoard(board, digits, opt = {}) {
  if (board.children.length !== 49) {
    board.textContent = '';
    for (let i = 0; i < 49; i++) {
      board.append(el('div', { class: 'cell', 'data-row': Math.floor(i / 7), 'data-col': i % 7 }));
    }
  }
  const marks = new Set(opt.marks || []);
  const hits = new Set(opt.hits || []);
  for (let i = 0; i < 49; i++) {
    const c = board.children[i];
    const v = digits[i];
    c.dataset.v = v;
    let cls = 'cell v' + v;
    if (marks.has(i)) cls += ' mark';
    if (hits.has(i)) cls += ' hit';
    if (opt.column === i % 7) cls += ' chosen';
    c.className = cls;
    c.textContent = v >= '1' && v <= '7' ? v : '';
  }
  board.dataset.board = digits;
}

function renderDisc(span, v) {
  span.textContent = v;
  span.className = span.className.replace(/\s*\bv\d\b/g, '') + ' v' + v;
  span.dataset.v = String(v);
}

function riseDots(n) {
  return '●'.repeat(n) + '○'.repeat(Math.max(0, 5 - n));
}

function waveText(line) {
  if (!line) return '';
  const w = line.waves.map((x) => `chain ${x.depth}: ${x.cleared} pop${x.revealed ? `, ${x.revealed} revealed` : ''}`);
  let t = `move ${line.move}: ${line.disc} in column ${line.column}, ${signed(line.scoreDelta)} points`;
  if (w.length) t += ` (${w.join('; ')})`;
  if (line.levelAdvanced) t += ', rise';
  if (line.clearedBoard) t += ', board cleared';
  if (line.gameOver) t += ', game over';
  return t;
}

// ---------------------------------------------------------------- play

const play = { seed: null, moves: '', data: null, frames: [], frame: 0, timer: null, animating: false };

function setupPlay() {
  const drops = $('#drops');
  for (let c = 0; c < 7; c++) {
    drops.append(el('button', { type: 'button', class: 'drop', 'data-col': c, title: `drop in column ${c}`, onclick: () => move(c) }, '▼'));
  }
  const q = $('#qrow');
  for (let c = 0; c < 7; c++) q.append(el('div', { class: 'q', 'data-col': c }));
  $('#new-game').addEventListener('click', () => newGame($('#seed').value.trim() || 'random'));
  $('#random-game').addEventListener('click', () => newGame('random'));
  $('#undo').addEventListener('click', () => { if (play.moves.length) loadGame(play.seed, play.moves.slice(0, -1), false); });
  $('#save').addEventListener('click', save);
  $('#load').addEventListener('click', () => loadTrace($('#saved').value));
  $('#load-file').addEventListener('change', async (ev) => {
    const f = ev.target.files[0];
    if (f) loadTrace(await f.text());
  });
  $('#advise').addEventListener('click', advise);
  $('#leaf').addEventListener('click', leafTerms);
  $('#frame-prev').addEventListener('click', () => stepFrame(-1));
  $('#frame-next').addEventListener('click', () => stepFrame(1));
  $('#frame-play').addEventListener('click', () => animateFrames());
  document.addEventListener('keydown', (ev) => {
    if ($('#play').hidden || ev.target.tagName === 'INPUT' || ev.target.tagName === 'TEXTAREA') return;
    if (ev.key >= '1' && ev.key <= '7') move(Number(ev.key) - 1);
    if (ev.key === 'u') $('#undo').click();
  });
}

async function newGame(seed) {
  const d = await api(`/api/new?seed=${enc(seed)}`);
  await loadGame(d.seedHex, '', false);
}

async function loadGame(seed, moves, animate) {
  const d = await api(`/api/game?seed=${enc(seed)}&moves=${moves}`);
  play.seed = d.seedHex;
  play.moves = d.moves;
  play.data = d;
  play.frames = d.frames;
  $('#seed').value = d.seedHex;
  history.replaceState(null, '', `#play=${d.seedHex}:${d.moves}`);
  clearAdvice();
  renderPlayStatus(d);
  if (animate && d.frames.length) animateFrames();
  else showFinal();
}

function renderPlayStatus(d) {
  const s = d.state;
  $('#play-seed').textContent = d.seedHex;
  $('#play-score').textContent = fmt(s.score);
  $('#play-score').dataset.value = String(s.score);
  $('#play-level').textContent = s.level;
  $('#play-moves').textContent = s.movesPlayed;
  renderDisc($('#play-next'), s.next);
  $('#play-rise').textContent = s.finished ? '–' : `${s.rise} move${s.rise === 1 ? '' : 's'}`;
  $('#play-rise').dataset.value = String(s.rise);
  $('#play-rise-dots').textContent = s.finished ? '' : riseDots(s.rise);
  $('#play-state').textContent = s.gameOver ? 'game over' : s.censored ? 'stopped at the move cap' : 'live';
  $$('#drops .drop').forEach((b, c) => { b.disabled = s.finished || !s.legal[c]; });
  $('#undo').disabled = d.moves.length === 0;
  const h = $('#history');
  h.textContent = '';
  for (const line of d.trace.slice().reverse()) h.append(el('li', { text: waveText(line) }));
}

function move(c) {
  if (!play.data || play.data.state.finished || !play.data.state.legal[c]) return;
  loadGame(play.seed, play.moves + c, true);
}

function showFrame() {
  const f = play.frames[play.frame];
  renderBoard($('#play-board'), f.board, { marks: f.marks, hits: f.hits });
  $('#frame-text').textContent = `step ${play.frame + 1}/${play.frames.length}: ${f.text} (move so far ${signed(f.points)})`;
}

function showFinal() {
  stopAnimation();
  play.frame = play.frames.length;
  renderBoard($('#play-board'), play.data.state.board);
  const last = play.data.trace[play.data.trace.length - 1];
  $('#frame-text').textContent = last ? waveText(last) : 'no move yet';
}

function stopAnimation() {
  if (play.timer) clearInterval(play.timer);
  play.timer = null;
  if (play.animating) {
    play.animating = false;
    setBusy(-1);
  }
}

function animateFrames() {
  stopAnimation();
  if (!play.frames.length) return;
  play.animating = true;
  setBusy(1);
  play.frame = 0;
  showFrame();
  play.timer = setInterval(() => {
    play.frame += 1;
    if (play.frame >= play.frames.length) showFinal();
    else showFrame();
  }, 350);
}

function stepFrame(d) {
  stopAnimation();
  if (!play.frames.length) return;
  play.frame = Math.max(0, Math.min(play.frames.length, play.frame + d));
  if (play.frame === play.frames.length) showFinal();
  else showFrame();
}

function clearAdvice() {
  $('#leaf-out').textContent = '';
  $$('#qrow .q').forEach((q) => { q.textContent = ''; q.className = 'q'; delete q.dataset.q; });
  $$('#drops .drop').forEach((b) => b.classList.remove('best'));
  $('#advice-out').textContent = '';
}

async function advise() {
  const policy = $('#policy').value.trim() || 'fair-d2s7';
  $('#advice-out').textContent = `${policy} is thinking…`;
  let d;
  try {
    d = await api(`/api/advice?policy=${enc(policy)}&seed=${enc(play.seed)}&moves=${play.moves}`);
  } catch (e) {
    $('#advice-out').textContent = '';
    return;
  }
  clearAdvice();
  const qs = d.q.filter((x) => x !== null);
  const best = qs.length ? Math.max(...qs) : null;
  $$('#qrow .q').forEach((q, c) => {
    const v = d.q[c];
    if (v !== null) {
      q.dataset.q = String(v);
      q.textContent = fmt(v);
      if (v === best) q.classList.add('top');
    } else if (d.qKind !== 'none') {
      q.textContent = '×';
    }
  });
  if (d.column !== null) $(`#drops .drop[data-col="${d.column}"]`).classList.add('best');
  const out = $('#advice-out');
  out.dataset.column = String(d.column);
  out.dataset.work = String(d.work);
  let t = `${d.policy}: column ${d.column}`;
  if (d.qKind === 'search') t += ` · Q per column below (points) · work ${fmt(d.work)} (by depth ${d.workByDepth.map(fmt).join(', ')}) · ${d.seconds.toFixed(2)} s`;
  else if (d.qKind === 'one-ply') t += ' · one-ply value per column below (points)';
  else t += ' · this policy has no per-column values';
  out.textContent = t;
}

async function leafTerms() {
  const d = await api(`/api/leaf?seed=${enc(play.seed)}&moves=${play.moves}`);
  const box = $('#leaf-out');
  box.textContent = '';
  box.dataset.leaf = String(d.leaf);
  box.append(el('p', { class: 'muted', text: `fair leaf ${fmt(d.leaf)} = Σ weight × raw term` }),
    table(['term', 'weight', 'raw', 'weight × raw'], d.terms.map((t) => [t.name, t.weight, Number(t.raw.toFixed(3)), fmt(t.weight * t.raw)])));
}

async function save() {
  const text = await api(`/api/trace?seed=${enc(play.seed)}&moves=${play.moves}`);
  $('#saved').value = text;
  const a = $('#download');
  a.href = URL.createObjectURL(new Blob([text], { type: 'application/x-ndjson' }));
  a.download = `drop7-${play.seed}-${play.moves.length}moves.jsonl`;
  a.hidden = false;
}

async function loadTrace(text) {
  const d = await api('/api/load', { method: 'POST', body: text });
  await loadGame(d.seedHex, d.moves, false);
}

// ---------------------------------------------------------------- replay

const rp = { sides: [], i: 0, n: 0, pair: null };

async function setupReplay() {
  $('#results-file').addEventListener('change', pickFile);
  $('#replay-go').addEventListener('click', async () => {
    const file = $('#results-file').value;
    const seed = $('#results-game').value;
    if (!file || !seed) return;
    $('#replay-info').textContent = 'replaying…';
    const d = await api(`/api/replay?file=${enc(file)}&seed=${enc(seed)}`);
    showReplay([d], null);
  });
  $('#rp-slider').addEventListener('input', (ev) => { rp.i = Number(ev.target.value); renderReplayStep(); });
  $('#rp-first').addEventListener('click', () => replayTo(0));
  $('#rp-prev').addEventListener('click', () => replayTo(rp.i - 1));
  $('#rp-next').addEventListener('click', () => replayTo(rp.i + 1));
  $('#rp-last').addEventListener('click', () => replayTo(rp.n));
  document.addEventListener('keydown', (ev) => {
    if ($('#replay').hidden || ev.target.tagName === 'INPUT' && ev.target.type !== 'range') return;
    if (ev.key === 'ArrowRight') replayTo(rp.i + 1);
    if (ev.key === 'ArrowLeft') replayTo(rp.i - 1);
  });
}

async function listFiles() {
  const d = await api('/api/files');
  const s = $('#results-file');
  const keep = s.value;
  s.textContent = '';
  s.append(el('option', { value: '', text: d.files.length ? '— choose —' : '(no results files under the directory)' }));
  for (const f of d.files) s.append(el('option', { value: f.path, text: `${f.path} (${f.arm})` }));
  if (keep) s.value = keep;
}

async function pickFile() {
  const file = $('#results-file').value;
  const g = $('#results-game');
  g.textContent = '';
  if (!file) return;
  const d = await api(`/api/games?file=${enc(file)}`);
  for (const x of d.games) {
    g.append(el('option', { value: x.seedHex, text: `${x.seedHex}: ${fmt(x.score)} in ${x.moves} moves${x.censored ? ' (cap)' : ''}` }));
  }
  $('#replay-info').textContent = `${d.total} games of ${d.games[0].arm}${d.listed < d.total ? ` (first ${d.listed} listed)` : ''}`;
}

function replayTo(i) {
  rp.i = Math.max(0, Math.min(rp.n, i));
  renderReplayStep();
}

function showReplay(sides, pair) {
  rp.sides = sides;
  rp.pair = pair;
  rp.n = Math.max(...sides.map((s) => s.states.length - 1));
  rp.i = 0;
  const panels = $('#replay-panels');
  panels.textContent = '';
  sides.forEach((s, k) => {
    const role = pair ? (k === 0 ? 'candidate' : 'reference') : 'game';
    let check = '';
    if (s.matches === true) check = '✓ replay matches the record (score, moves)';
    else if (s.matches === false) check = `✗ replay differs from the record: recorded ${fmt(s.record.score)} in ${s.record.moves} moves`;
    else check = 're-played (no record to check against)';
    panels.append(el('div', { class: 'panel', 'data-side': k },
      el('h3', { text: `${role}: ${s.policy}` }),
      el('div', { class: 'muted', text: `seed ${s.seedHex} · final ${fmt(s.score)} in ${s.moves} moves · ${check}` }),
      el('div', { class: 'colmarks' }),
      el('div', { class: 'board' }),
      el('dl', { class: 'status' },
        el('dt', { text: 'move' }), el('dd', { class: 'st-move' }),
        el('dt', { text: 'score' }), el('dd', { class: 'st-score' }),
        el('dt', { text: 'level' }), el('dd', { class: 'st-level' }),
        el('dt', { text: 'next disc' }), el('dd', {}, el('span', { class: 'disc st-next' })),
        el('dt', { text: 'rise in' }), el('dd', { class: 'st-rise' }),
        el('dt', { text: 'plays' }), el('dd', { class: 'st-column' })),
      el('div', { class: 'st-line muted' })));
  });
  const slider = $('#rp-slider');
  slider.max = String(rp.n);
  $('#replay-info').textContent = pair
    ? `${pair.screen}, seed ${pair.seedHex}: ${pair.candidate.policy} − ${pair.reference.policy} = ${signed(pair.delta)} (${pair.recorded ? 'recorded scores' : 're-played scores: this screen has no games files'}; mean difference over the screen ${pair.deltaMean === null ? '–' : signed(pair.deltaMean)})`
    : `${sides[0].file || ''} seed ${sides[0].seedHex}`;
  showTab('replay');
  renderReplayStep();
}

function renderReplayStep() {
  $('#rp-slider').value = String(rp.i);
  $('#rp-pos').textContent = `move ${rp.i} of ${rp.n}`;
  $('#rp-pos').dataset.i = String(rp.i);
  const scores = [];
  rp.sides.forEach((s, k) => {
    const p = $(`#replay-panels .panel[data-side="${k}"]`);
    const idx = Math.min(rp.i, s.states.length - 1);
    const st = s.states[idx];
    const col = idx < s.columns.length ? Number(s.columns[idx]) : null;
    renderBoard($('.board', p), st.board, { column: col });
    const marks = $('.colmarks', p);
    marks.textContent = '';
    for (let c = 0; c < 7; c++) marks.append(el('div', { class: c === col ? 'colmark on' : 'colmark', text: c === col ? '▼' : '' }));
    $('.st-move', p).textContent = `${st.moves} / ${s.moves}`;
    $('.st-score', p).textContent = fmt(st.score);
    $('.st-score', p).dataset.value = String(st.score);
    $('.st-level', p).textContent = st.level;
    renderDisc($('.st-next', p), st.next);
    $('.st-rise', p).textContent = st.rise ? `${st.rise} ${riseDots(st.rise)}` : '–';
    $('.st-column', p).textContent = col === null ? (s.gameOver ? 'game over' : 'end') : `column ${col}`;
    $('.st-column', p).dataset.value = col === null ? '' : String(col);
    $('.st-line', p).textContent = idx > 0 ? `last: ${waveText(s.trace[idx - 1])}` : 'opening position';
    scores.push(st.score);
  });
  const diff = $('#rp-diff');
  if (rp.pair && scores.length === 2) {
    diff.textContent = `after ${rp.i} moves: ${signed(scores[0] - scores[1])} (final paired difference ${signed(rp.pair.delta)})`;
  } else diff.textContent = '';
}

// ---------------------------------------------------------------- runs

async function listRuns() {
  const d = await api('/api/runs');
  const ul = $('#screens');
  ul.textContent = '';
  for (const s of d.screens) {
    const v = s.contrasts.map((c) => `${c.candidate} vs ${c.reference}: ${c.verdict}`).join('; ');
    ul.append(el('li', {}, el('button', { type: 'button', class: 'link', 'data-path': s.path, onclick: () => openScreen(s.path) }, s.path),
      el('span', { class: 'muted', text: ` ${s.seeds} · ${v}` })));
  }
  for (const s of d.inProgress) ul.append(el('li', { class: 'muted', text: `${s.path}: in progress (${(s.arms || []).join(', ')})` }));
  if (!ul.children.length) ul.append(el('li', { class: 'muted', text: 'no screen reports under the directory' }));
  const tl = $('#training');
  tl.textContent = '';
  for (const t of d.training) {
    tl.append(el('li', {}, el('button', { type: 'button', class: 'link', 'data-path': t.path, onclick: () => openTraining(t.path) }, t.path || '.'),
      el('span', { class: 'muted', text: ` ${t.records} records, ${t.validations} validations, ${fmt(t.moves)} moves` })));
  }
  if (!tl.children.length) tl.append(el('li', { class: 'muted', text: 'no training runs (progress.jsonl) under the directory' }));
}

function table(head, rows) {
  return el('table', {}, el('thead', {}, el('tr', {}, ...head.map((h) => el('th', { text: h })))),
    el('tbody', {}, ...rows.map((r) => el('tr', {}, ...r.map((x) => el('td', { text: String(x) }))))));
}

async function openScreen(path) {
  const s = await api(`/api/screen?path=${enc(path)}`);
  const box = $('#run-detail');
  box.textContent = '';
  box.dataset.screen = s.path;
  box.append(el('h2', { text: `Screen ${s.path}` }),
    el('p', { class: 'muted', text: `seeds ${s.seeds} · lease ${s.lease} · ${s.format}${s.formatNote ? ' — ' + s.formatNote : ''}` }));
  box.append(table(['arm', 'games', 'mean', 'median', 'Q25', 'max', 'moves', 'work/move', 'games file'],
    s.arms.map((a) => [a.name, a.games, fmt(a.mean), fmt(a.median), fmt(a.q25), fmt(a.max), (a.meanMoves || 0).toFixed(1), fmt(a.workPerMove), a.gamesFile || '–'])));
  const ct = table(['contrast', 'delta', 'bootstrap LB95', 'UB95', 't LB95', 'W-T-L', 'halves', 'floor', 'gate', 'verdict'],
    s.contrasts.map((c) => [`${c.candidate.name} − ${c.reference.name}`, signed(c.deltaMean), signed(c.bootstrapLb95), signed(c.bootstrapUb95), signed(c.tLb95),
      `${c.wins}-${c.ties}-${c.losses}`, `${signed(c.firstHalfMean)} / ${signed(c.secondHalfMean)}`, fmt(c.detectionFloor), c.gate && c.gate.passed ? 'pass' : 'fail', c.verdict]));
  ct.id = 'contrasts';
  box.append(ct);
  s.figures.forEach((f, i) => {
    if (f) box.append(el('figure', {}, el('img', { src: `/files/${f.split('/').map(enc).join('/')}`, alt: `paired differences, contrast ${i}`, class: 'figure' }), el('figcaption', { class: 'muted', text: f })));
  });
  // compare two arms on one seed
  const block = /^(0x[0-9a-f]+|\d+):(\d+)$/i.exec(s.seeds || '');
  const cmp = el('div', { class: 'controls' });
  const csel = el('select', { id: 'pair-contrast' }, ...s.contrasts.map((c, i) => el('option', { value: i, text: `${c.candidate.name} vs ${c.reference.name}` })));
  const ssel = el('select', { id: 'pair-seed' });
  const withGames = s.arms.find((a) => a.gamesFile);
  if (withGames) {
    const g = await api(`/api/games?file=${enc(withGames.gamesFile)}`);
    for (const x of g.games) ssel.append(el('option', { value: x.seedHex, text: `${x.seedHex} (${withGames.name}: ${fmt(x.score)})` }));
  } else if (block) {
    const start = Number(block[1]);
    const n = Math.min(Number(block[2]), 512);
    for (let k = 0; k < n; k++) {
      const hex = '0x' + ((start + k) >>> 0).toString(16).padStart(8, '0');
      ssel.append(el('option', { value: hex, text: hex }));
    }
  }
  cmp.append(el('span', { text: 'Compare the arms on seed ' }), ssel, csel,
    el('button', { type: 'button', id: 'pair-go', onclick: () => comparePair(s.path) }, 'Side by side'));
  box.append(cmp);
  if (!withGames) box.append(el('p', { class: 'muted', text: 'This report has no games files beside it: the games are re-played with each arm\'s policy (a deep search takes seconds per game; an arm whose model is not under the directory cannot be re-played).' }));
  if (s.markdown) box.append(el('details', {}, el('summary', { text: 'report (Markdown)' }), el('pre', { text: s.markdown })));
}

async function comparePair(path) {
  const seed = $('#pair-seed').value;
  const contrast = $('#pair-contrast').value;
  $('#pair-go').disabled = true;
  $('#replay-info').textContent = 're-playing both games…';
  const note = el('span', { class: 'muted', id: 'pair-wait', text: ' re-playing both games (a deep search takes seconds per game)…' });
  $('#pair-go').after(note);
  try {
    const d = await api(`/api/pair?screen=${enc(path)}&seed=${enc(seed)}&contrast=${enc(contrast)}`);
    showReplay([d.candidate, d.reference], d);
  } finally {
    $('#pair-go').disabled = false;
    note.remove();
  }
}

async function openTraining(path) {
  const t = await api(`/api/training?path=${enc(path || '.')}`);
  const box = $('#run-detail');
  box.textContent = '';
  box.dataset.training = t.path;
  box.append(el('h2', { text: `Training run ${t.path || '.'}` }),
    el('img', { class: 'figure', src: `/api/training.svg?path=${enc(path || '.')}`, alt: 'training curve' }));
  box.append(el('h3', { text: 'Validation points' }));
  box.append(table(['moves', 'candidate mean', 'fair mean', 'margin', 'bootstrap LB95', 'UB95', 't LB95', 'W-T-L', 'best'],
    t.validation.map((v) => [fmt(v.moves), fmt(v.candidateMean), fmt(v.fairMean), signed(v.margin), signed(v.bootstrapLb95), signed(v.bootstrapUb95), signed(v.tLb95), `${v.wins}-${v.ties}-${v.losses}`, v.best ? 'saved' : ''])));
  const last = t.train[t.train.length - 1];
  if (last) box.append(el('p', { class: 'muted', text: `${t.train.length} training points; last: ${fmt(last.moves)} moves, ${fmt(last.games)} games, recent mean ${fmt(last.recentMeanScore)}, ${fmt(last.movesPerSecond)} moves/s` }));
  if (t.checkpoint) box.append(el('details', {}, el('summary', { text: 'checkpoint.json' }), el('pre', { text: JSON.stringify(t.checkpoint, null, 2) })));
}

// ---------------------------------------------------------------- tabs

function showTab(name) {
  for (const s of $$('main > .tab')) s.hidden = s.id !== name;
  for (const b of $$('.tab-button')) b.classList.toggle('active', b.dataset.tab === name);
  if (name === 'replay' && !showTab.files) { showTab.files = true; listFiles().catch(() => {}); }
  if (name === 'runs' && !showTab.runs) { showTab.runs = true; listRuns().catch(() => {}); }
}

async function main() {
  for (const b of $$('.tab-button')) b.addEventListener('click', () => showTab(b.dataset.tab));
  setupPlay();
  setupReplay();
  const info = await api('/api/info');
  $('#dir').textContent = `results: ${info.dir}`;
  for (const p of info.policies) $('#policies').append(el('option', { value: p }));
  const m = /^#play=([^:]+):([0-6]*)$/.exec(location.hash);
  if (m) await loadGame(m[1], m[2], false);
  else await newGame('random');
}

main().catch((e) => showError(e.message));
