// Pairing in the console (DM_POLICY=pairing, docs/admin.md "Pairing"):
// pending codes with Approve and Deny buttons, paired users with a Revoke button.
// No lifecycle event announces a new code, so the lists refresh every 15 s.

const $ = (id) => document.getElementById(id);
const refreshMs = 15_000;

function cell(text) {
  const td = document.createElement('td');
  td.textContent = text;
  return td;
}

function button(label, testid, onClick) {
  const td = document.createElement('td');
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = label;
  b.dataset.testid = testid;
  b.addEventListener('click', onClick);
  td.append(b);
  return td;
}

export function createPairingPanel(api) {
  let timer = null;

  async function act(method, path, done) {
    try {
      await api(method, path);
      $('pairing-result').textContent = done;
    } catch (error) {
      $('pairing-result').textContent = `error: ${error.message}${error.data?.error ? ` (${error.data.error})` : ''}`;
    }
    await load();
  }

  function renderPending(items) {
    $('pairing-list').replaceChildren(
      ...items.map((p) => {
        const tr = document.createElement('tr');
        tr.dataset.testid = `pairing-row-${p.code}`;
        const approve = button('Approve', `approve-${p.code}`, () => act('POST', `/admin/pairings/${encodeURIComponent(p.code)}/approve`, `approved ${p.platform} user ${p.userId}`));
        const deny = button('Deny', `deny-${p.code}`, () => {
          if (window.confirm(`Deny ${p.platform} user ${p.userId}? They get no new code for a day.`)) void act('POST', `/admin/pairings/${encodeURIComponent(p.code)}/deny`, `denied ${p.platform} user ${p.userId}`);
        });
        tr.append(cell(p.code), cell(p.platform), cell(p.userId), cell(new Date(p.expiresAt).toLocaleTimeString()), approve, deny);
        return tr;
      }),
    );
    $('pairings-empty').hidden = items.length > 0;
  }

  function renderPaired(items) {
    $('paired-list').replaceChildren(
      ...items.map((u) => {
        const tr = document.createElement('tr');
        tr.dataset.testid = `paired-row-${u.platform}-${u.userId}`;
        const path = `/admin/paired-users/${encodeURIComponent(u.platform)}/${encodeURIComponent(u.userId)}`;
        const revoke = button('Revoke', `revoke-${u.platform}-${u.userId}`, () => {
          if (window.confirm(`Revoke ${u.platform} user ${u.userId}? Their next message is an unknown user's again.`)) void act('DELETE', path, `revoked ${u.platform} user ${u.userId}`);
        });
        tr.append(cell(u.platform), cell(u.userId), cell(u.approvedBy), cell(new Date(u.pairedAt).toLocaleString()), revoke);
        return tr;
      }),
    );
  }

  async function load() {
    const [pending, paired] = await Promise.all([api('GET', '/admin/pairings'), api('GET', '/admin/paired-users')]);
    renderPending(pending.items);
    renderPaired(paired.items);
  }

  $('pairings-refresh').addEventListener('click', () => load().catch(() => undefined));
  return {
    start() {
      clearInterval(timer);
      timer = setInterval(() => {
        if (!$('app').hidden) load().catch(() => undefined);
      }, refreshMs);
      return load();
    },
  };
}
