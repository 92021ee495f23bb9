"""DDP011 on skips decided by what this rank's batch holds, before the forward."""

from __future__ import annotations

import textwrap

from ddplint.api import lint_source

HEADER = """\
import torch
import torch.distributed as dist

def reduce_losses(losses):
    stacked = torch.stack(list(losses.values()))
    dist.all_reduce(stacked)
    return stacked

"""


def findings(body: str) -> list[tuple[int, bool]]:
    """(row counted in `body`, unproven) of each DDP011 finding."""
    offset = HEADER.count("\n")
    found = lint_source(HEADER + textwrap.dedent(body), select=["DDP011"])
    return [(d.start.row - offset, d.unproven) for d in found]


LOOP = """\
def do_train(model, loader, optimizer, device):
    for step, (images, targets) in enumerate(loader):
        if {test}:
            continue
        images = images.to(device)
        targets = [t.to(device) for t in targets]
        losses = model(images, targets)
        reduced = reduce_losses(losses)
        optimizer.zero_grad()
        sum(losses.values()).backward()
        optimizer.step()
"""


def test_empty_target_skip_before_the_forward_is_proven_by_the_skipped_collective():
    assert findings(LOOP.format(test="any(len(t) < 1 for t in targets)")) == [(4, False)]


def test_missing_batch_skip():
    assert findings(LOOP.format(test="targets is None")) == [(4, False)]


def test_message_says_what_the_others_wait_in():
    source = HEADER + textwrap.dedent(LOOP.format(test="any(len(t) < 1 for t in targets)"))
    (finding,) = lint_source(source, select=["DDP011"])
    assert "what this rank's own batch holds" in finding.message
    assert "`reduce_losses()`" in finding.message


def test_batch_shape_and_step_skips_are_left_alone():
    for test in ("len(images) < 2", "images.size(0) < 2", "images.numel() == 0", "step < 10"):
        assert findings(LOOP.format(test=test)) == [], test


def test_index_under_a_progress_bar_is_left_alone():
    body = LOOP.replace("enumerate(loader)", "tqdm(enumerate(loader), total=len(loader))")
    assert findings(body.format(test="step < 10")) == []


def test_batch_structure_is_left_alone():
    for test in ('"masks" not in targets', "images.dtype != torch.float32"):
        assert findings(LOOP.format(test=test)) == [], test


def test_loop_over_settings_is_left_alone():
    body = """\
    def train(model, loaders, optimizer, enabled):
        for task, batch in loaders:
            if task not in enabled:
                continue
            loss = model(batch).sum()
            reduce_losses({"loss": loss})
            loss.backward()
            optimizer.step()
    """
    assert findings(body) == []


def test_a_collate_field_tested_as_it_is_is_unproven():
    body = """\
    def do_train(model, loader, optimizer, device):
        for item in loader:
            if item["batch_size"] == 0:
                continue
            images = item["images"].to(device)
            loss = model(images).sum()
            reduce_losses({"loss": loss})
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    """
    assert findings(body) == [(4, True)]


SIZE_HELD = """\
def train_one_epoch(model, loader, optimizer, args):
    for it, data in enumerate(loader):
        images = [im.cuda(non_blocking=True) for im in data[0]]
        bsz = {size}
        if bsz != args.batch_size:
            continue
        loss = model(images, torch.arange(bsz).cuda()).sum()
        reduce_losses({{"loss": loss}})
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""


def test_a_skip_on_a_size_held_in_a_name_is_unproven():
    # The short last batch: a padded DistributedSampler gives every rank the same count,
    # but one element's size may also be what that sample holds.
    for size in ("images[0].shape[0]", "len(images)", "images[-1].size(0)"):
        assert findings(SIZE_HELD.format(size=size)) == [(6, True)], size


def test_a_skip_on_a_count_of_what_the_batch_holds_is_proven():
    assert findings(SIZE_HELD.format(size="int(data[1].sum())")) == [(6, False)]
