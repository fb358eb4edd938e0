// Switchboard console: plain browser JS over the admin API (docs/admin.md).
// Authenticated by the HttpOnly session cookie that POST /admin/session sets,
// so the token is never kept in the page; the event stream uses the same cookie.

import { createPairingPanel } from './pairings.js';

const $ = (id) => document.getElementById(id);
const state = { conversations: new Map(), activity: new Map(), selected: null, socket: null, retryMs: 500, reloadTimer: null };

async function api(method, path, body) {
  const init = { method, credentials: 'same-origin', headers: {} };
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const text = await response.text();
  const data = text ? JSON.parse(text) : {};
  if (response.status === 401) showSignIn();
  if (!response.ok) throw Object.assign(new Error(data.message || data.error || `HTTP ${response.status}`), { status: response.status, data });
  return data;
}

function showSignIn(message) {
  $('app').hidden = true;
  $('sign-in').hidden = false;
  $('sign-out').hidden = true;
  $('signed-in-links').hidden = true;
  $('actor').textContent = '';
  $('sign-in-error').textContent = message || '';
  const socket = state.socket;
  state.socket = null;
  if (socket) socket.close();
}

async function signIn(token) {
  const response = await fetch('/admin/session', { method: 'POST', credentials: 'same-origin', headers: { authorization: `Bearer ${token}` } });
  if (!response.ok) {
    showSignIn(response.status === 429 ? 'Too many failed attempts; wait a minute.' : 'That token was not accepted.');
    return;
  }
  const { actor } = await response.json();
  start(actor);
}

function start(actor) {
  $('sign-in').hidden = true;
  $('app').hidden = false;
  $('sign-out').hidden = false;
  $('signed-in-links').hidden = false;
  $('actor').textContent = `signed in as ${actor}`;
  loadConversations();
  pairingPanel.start().catch(reportError);
  connectEvents();
}

async function loadConversations() {
  const status = $('status-filter').value;
  const data = await api('GET', `/admin/conversations?limit=200${status ? `&status=${status}` : ''}`);
  state.conversations = new Map(data.items.map((c) => [c.id, c]));
  renderList();
  if (state.selected !== null) loadDetail(state.selected);
}

/** Events arrive in bursts; one reload per burst is enough. */
function scheduleReload() {
  clearTimeout(state.reloadTimer);
  state.reloadTimer = setTimeout(() => loadConversations().catch(reportError), 150);
}

function cell(text, className) {
  const td = document.createElement('td');
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

function renderList() {
  const body = $('conversations');
  body.replaceChildren();
  for (const c of state.conversations.values()) {
    const tr = document.createElement('tr');
    tr.dataset.testid = `conversation-row-${c.id}`;
    tr.dataset.id = String(c.id);
    tr.dataset.chatId = c.chatId;
    if (c.id === state.selected) tr.classList.add('selected');
    const activity = state.activity.get(c.id) || (c.runningTurnId ? 'running' : '');
    tr.append(
      cell(String(c.id)),
      cell(c.platform),
      cell(c.chatId + (c.threadId ? ` / ${c.threadId}` : '')),
      Object.assign(cell(c.status, `status-${c.status}`), { title: c.suspendReason || '' }),
      cell(c.busyMode || 'default'),
      cell((c.runtime || 'default') + (c.permissionProfile ? ` / ${c.permissionProfile}` : '')),
      cell(activity, activity.startsWith('running') ? 'activity-running' : ''),
      cell(String(c.queuedInput)),
      cell(String(c.restartCount)),
      cell(new Date(c.updatedAt).toLocaleTimeString()),
    );
    tr.children[3].dataset.testid = 'status';
    tr.children[5].dataset.testid = 'runtime';
    tr.children[6].dataset.testid = 'activity';
    tr.addEventListener('click', () => select(c.id));
    body.append(tr);
  }
  $('empty').hidden = state.conversations.size > 0;
}

function select(id) {
  state.selected = id;
  renderList();
  loadDetail(id).catch(reportError);
}

async function loadDetail(id) {
  const [detail, transcript, asked, recent] = await Promise.all([
    api('GET', `/admin/conversations/${id}`),
    api('GET', `/admin/conversations/${id}/transcript?order=desc&limit=200`),
    api('GET', `/admin/conversations/${id}/approvals`),
    api('GET', `/admin/turns?conversation=${id}&limit=5`),
  ]);
  const c = detail.conversation;
  $('detail').hidden = false;
  $('detail-id').textContent = `#${c.id}`;
  $('detail-key').textContent = c.key;
  $('detail-status').textContent = c.status + (c.suspendReason ? ` (${c.suspendReason})` : '');
  $('detail-status').className = `status-${c.status}`;
  $('detail-busy').textContent = c.busyMode || `default (${detail.defaultBusyMode})`;
  $('detail-restarts').textContent = String(c.restartCount);
  $('detail-chain').textContent = detail.chain.map((s) => `${s.id} ${s.status}`).join(' → ') || 'none yet';
  $('detail-turn').textContent = detail.runningTurn ? `turn ${detail.runningTurn.id} since ${new Date(detail.runningTurn.startedAt).toLocaleTimeString()}` : 'none';
  $('detail-queued').textContent = String(c.queuedInput);
  // Which model answered each recent turn: another than MODEL_NAME means MODEL_FALLBACKS stepped in.
  $('detail-turns').textContent = recent.items.map((t) => `${t.id} ${t.status}${t.model ? ` by ${t.model}` : ''}`).join(', ') || 'none yet';
  $('busy-mode').value = c.busyMode || '';
  $('detail-runtime').textContent = c.runtime || `default (${detail.defaultRuntime})`;
  $('detail-profile').textContent = (c.permissionProfile || 'default (read-only)') + ((c.permissionProfile === 'full-access' || c.permissionProfile === 'full-access-unattended') && !detail.fullAccessAllowed ? ' — runs read-only: full access is off' : '');
  $('detail-crashes').textContent = String(c.runtimeCrashStreak);
  // The operator's chosen model (PUT .../model); without one, MODEL_NAME and then MODEL_FALLBACKS in order.
  $('detail-model').textContent = c.model ? `${c.model} (${c.modelFallback ? 'may fall back' : 'no fallback'})` : 'default (configured order)';
  $('model').value = c.model || '';
  $('model-fallback').checked = c.modelFallback;
  $('runtime').value = c.runtime || '';
  $('permission-profile').value = c.permissionProfile || '';
  // Offered only where the gateway allows it (CODEX_ALLOW_FULL_ACCESS); the API refuses it otherwise.
  for (const value of ['full-access', 'full-access-unattended']) $('permission-profile').querySelector(`option[value="${value}"]`).disabled = !detail.fullAccessAllowed;
  const messages = transcript.messages.slice().reverse();
  // Questions asked of the chat user sit in the transcript where they were asked (from the oldest message shown on).
  const since = messages.length > 0 ? messages[0].createdAt : '';
  const entries = [
    ...messages.map((m) => ({ at: m.createdAt, node: renderMessage(m) })),
    ...asked.approvals.filter((a) => a.askedAt >= since).map((a) => ({ at: a.askedAt, node: renderApproval(a) })),
  ].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  $('transcript').replaceChildren(...entries.map((entry) => entry.node));
}

function renderMessage(m) {
  const li = document.createElement('li');
  const role = document.createElement('span');
  role.className = 'role';
  role.textContent = m.kind === 'summary' ? 'summary' : m.role + (m.toolName ? ` (${m.toolName})` : '');
  li.append(role, document.createTextNode(m.content || (m.toolCalls ? m.toolCalls.map((t) => `${t.name}(${t.arguments})`).join(', ') : '')));
  if (m.kind === 'summary') li.className = 'summary';
  return li;
}

function renderApproval(a) {
  const li = document.createElement('li');
  li.className = `approval approval-${a.status}`;
  const role = document.createElement('span');
  role.className = 'role';
  role.textContent = `approval (${a.kind.replace('_', ' ')})`;
  const decided = a.decidedAt
    ? `${a.status.replaceAll('_', ' ')}${a.decidedByUserKey ? ` by ${a.decidedByUserKey}` : ''} via ${a.decidedVia} at ${new Date(a.decidedAt).toLocaleTimeString()}`
    : `waiting for ${a.askedOfUserKey || 'an approver'} until ${new Date(a.expiresAt).toLocaleTimeString()}`;
  li.append(role, document.createTextNode(`${a.summary}${a.detail ? `\n${a.detail}` : ''}\n→ ${decided}`));
  return li;
}

async function runAction(action) {
  const id = state.selected;
  if (id === null) return;
  const path = `/admin/conversations/${id}`;
  let result;
  if (action === 'busy-mode') {
    result = await api('PUT', `${path}/busy-mode`, { mode: $('busy-mode').value || null });
  } else if (action === 'runtime') {
    result = await api('PUT', `${path}/runtime`, { runtime: $('runtime').value || null, permissionProfile: $('permission-profile').value || null });
  } else if (action === 'model') {
    const model = $('model').value.trim();
    result = await api('PUT', `${path}/model`, model ? { model, fallback: $('model-fallback').checked } : { model: null });
  } else if (action === 'delete') {
    const key = state.conversations.get(id)?.key;
    const typed = window.prompt(`Delete conversation ${id} and its whole transcript?\nType its key to confirm:\n${key}`);
    if (typed === null) return;
    result = await api('DELETE', `${path}?confirm=${encodeURIComponent(typed)}`);
    state.selected = null;
    $('detail').hidden = true;
  } else {
    result = await api('POST', `${path}/${action}`);
  }
  $('action-result').textContent = `${action}: done${result.jobId ? ` (job ${result.jobId})` : ''}`;
  await loadConversations();
}

function connectEvents() {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  const socket = new WebSocket(`${scheme}://${location.host}/admin/events`);
  state.socket = socket;
  socket.addEventListener('message', (message) => {
    const event = JSON.parse(message.data);
    if (event.type === 'stream.opened') {
      $('live').textContent = 'live';
      $('live').className = 'pill on';
      state.retryMs = 500;
      return;
    }
    logEvent(event);
    const id = event.conversationId;
    if (event.type === 'turn.started') state.activity.set(id, 'running');
    else if (event.type === 'turn.ended') state.activity.set(id, `last turn ${event.outcome}`);
    if (!state.conversations.has(id) || !event.type.startsWith('turn.')) scheduleReload();
    else renderList();
    const row = document.querySelector(`tr[data-id="${id}"]`);
    if (row) row.classList.add('flash');
    if (id === state.selected) loadDetail(id).catch(reportError);
  });
  socket.addEventListener('close', () => {
    $('live').textContent = 'offline';
    $('live').className = 'pill off';
    if (state.socket !== socket || $('app').hidden) return;
    // Reconnect with backoff; events missed meanwhile are picked up by the reload.
    setTimeout(() => {
      connectEvents();
      scheduleReload();
    }, state.retryMs);
    state.retryMs = Math.min(state.retryMs * 2, 10_000);
  });
}

function logEvent(event) {
  const li = document.createElement('li');
  const extra = [event.outcome, event.reason].filter(Boolean).join(' ');
  li.textContent = `${new Date(event.at || Date.now()).toLocaleTimeString()} #${event.conversationId} ${event.type}${extra ? ` ${extra}` : ''}`;
  const log = $('event-log');
  log.prepend(li);
  while (log.children.length > 100) log.lastChild.remove();
}

function reportError(error) {
  $('action-result').textContent = `error: ${error.message}`;
}

const pairingPanel = createPairingPanel(api);

$('sign-in-form').addEventListener('submit', (event) => {
  event.preventDefault();
  signIn($('token').value.trim()).catch(reportError);
});
$('sign-out').addEventListener('click', async () => {
  await fetch('/admin/session', { method: 'DELETE', credentials: 'same-origin' });
  showSignIn();
});
$('refresh').addEventListener('click', () => loadConversations().catch(reportError));
$('status-filter').addEventListener('change', () => loadConversations().catch(reportError));
for (const button of document.querySelectorAll('[data-action]')) {
  button.addEventListener('click', () => runAction(button.dataset.action).catch(reportError));
}

fetch('/admin/whoami', { credentials: 'same-origin' })
  .then(async (response) => (response.ok ? start((await response.json()).actor) : showSignIn()))
  .catch(() => showSignIn('The gateway did not answer.'));
