"""``kdump rebuild-index SEGMENT.log --out DIR``: the .index and .timeindex a broker would write.

The entries come from ``kdump.log.index_builder`` (the writer's rules, which are the broker's
recovery rules: an entry per batch once more than index.interval.bytes have passed, the final
time-index entry of a rolled segment). Like recovery, the rebuild stops at the first batch whose
CRC fails. Outputs go to a separate directory and are never written over their source; existing
outputs are replaced only with ``--force`` (and only regular files). Both files are staged together
and renamed in at once (kdump.log.atomic): a failed or interrupted run leaves neither, and exits
128+N on signal N; a later run removes what a killed one left.
"""

from __future__ import annotations

import os

import click

from kdump.broker.recovery import RecoveredBatches, check_fits_segment
from kdump.cli.boundary import KdumpCommand
from kdump.cli.exit_codes import ExitCode
from kdump.cli.options import index_settings_options, traceback_option
from kdump.errors import KdumpError, UsageError
from kdump.log.atomic import write_files
from kdump.log.files import FileKind, base_offset_of, file_kind, segment_file_name
from kdump.log.index_builder import (
    IndexFullError,
    SegmentIndexBuilder,
)
from kdump.log.segment import ReadOnlyFile
from kdump.words import counted


@click.command("rebuild-index", cls=KdumpCommand, error_exit=ExitCode.FAILED)
@click.argument("segment", type=click.Path(exists=True, dir_okay=False))
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Directory for the rebuilt files (created if missing, in an existing parent; never the "
                   "segment's own directory).")
@click.option("--force", is_flag=True, help="Replace rebuilt files already present in --out.")
@index_settings_options
@traceback_option
def rebuild_index(segment: str, out_dir: str, force: bool, index_interval_bytes: int, segment_index_bytes: int,
                  traceback: bool) -> None:
    """Write the offset and time index the broker would write for SEGMENT.log into --out.

    \b
    kdump rebuild-index my-topic-0/00000000000000000000.log --out /tmp/rebuilt
    cmp /tmp/rebuilt/00000000000000000000.index my-topic-0/00000000000000000000.index
    """
    if file_kind(segment) is not FileKind.LOG:
        raise click.BadParameter("must be a segment's .log file", param_hint="SEGMENT")
    if os.path.realpath(out_dir) == os.path.realpath(os.path.dirname(os.path.abspath(segment))):
        raise click.BadParameter("is the segment's own directory: rebuild-index never replaces an index in "
                                 "place; write elsewhere and compare or move the files yourself",
                                 param_hint="--out")
    try:
        base = base_offset_of(segment)
        targets = [os.path.join(out_dir, segment_file_name(base, s)) for s in (".index", ".timeindex")]
        existing = [t for t in targets if os.path.lexists(t)]
        if existing and not force:
            raise click.UsageError(f"{', '.join(existing)} already exist (use --force to replace)")
        builder = SegmentIndexBuilder(base, index_interval_bytes, segment_index_bytes)
        with ReadOnlyFile(segment) as log:
            recovered = RecoveredBatches(log)
            for batch in recovered:
                check_fits_segment(batch, base)
                builder.add_scanned(batch)
        builder.close()
        stopped = recovered.stopped
        offset_data, time_data = builder.offset_index_bytes(), builder.time_index_bytes()
        write_files(out_dir, {os.path.basename(targets[0]): offset_data,
                              os.path.basename(targets[1]): time_data}, replace=force)
    except IndexFullError as err:  # KdumpError, OSError and signals end at the error boundary
        raise KdumpError(str(err), path=segment) from err
    except KdumpError as err:
        if not isinstance(err, UsageError):
            err.with_file(segment)
        raise
    if stopped is not None:
        click.echo(f"Note: {segment}: stopped where recovery would truncate the log: {stopped}", err=True)
    for target, entries, data in ((targets[0], builder.offset_entries, offset_data),
                                  (targets[1], builder.time_entries, time_data)):
        click.echo(f"wrote {target} ({counted(len(entries), 'entry')}, {len(data)} bytes)")
    click.echo(f"from {counted(recovered.count, 'batch')} ({builder.size} bytes) of {segment}, "
               f"index.interval.bytes={index_interval_bytes}")
