// Package proposal is the core of propose_changes: an assistant's edits
// to the person's own files, shown as a diff and written only with the
// person's yes.
//
// Build compares a sandbox file or directory (the tar stream the engine's
// archive call gives for /workspace/<path>) with a host file or directory
// through the same fences as copy_in and copy_out (hostfs: os.Root,
// identity, files.read_deny and files.write_deny, no host symlink
// followed) and below files.apply_roots. It writes nothing. A proposal
// onto a protected place is refused before anyone is asked.
//
// Save keeps a pending proposal in the state directory, beside the asks
// the tray already answers, so that the tray and the window (other
// processes) can show it and record the person's decision; no decision
// by its deadline is a reject. Apply re-reads every host file, refuses
// the whole proposal (stale) if one changed, and writes each file
// atomically through the fence after a backup of what it replaces. Settle runs
// the call's end for the engine: ask, apply on a yes, drop once decided.
//
//	p, err := proposal.Build(ctx, archive, proposal.Request{HostPath: "~/proj", Fence: f, ApplyRoots: roots})
//	err = proposal.Save(st, p)                     // the tray and the window see it
//	choice, err := proposal.Await(ctx, st, p, 0)   // or an elicitation's answer
//	res, err := proposal.Apply(ctx, p, proposal.ApplyOptions{Fence: f, ApplyRoots: roots, BackupDir: proposal.BackupDir(st.Dir())})
//
// Imports: sandbox/atomicfile, sandbox/filebackup, sandbox/hostfs, sandbox/state
package proposal
