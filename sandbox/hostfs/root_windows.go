package hostfs

// openNoBlock: Windows has no FIFOs in the file system to hang an open.
const openNoBlock = 0
