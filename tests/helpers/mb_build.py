#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""
mb_build.py - a TCG PC Client crypto-agile boot event log (sha256 bank) of
a UEFI Secure Boot through shim, GRUB and a Linux kernel, built the way
each of them measures (t0529, issue 45), from the real images:

  firmware  PCR 0 S-CRTM version and a firmware blob (made up), PCR 7
            SecureBoot, PK, KEK, db, dbx (UEFI_VARIABLE_DATA, digest of the
            whole structure, as EDK2), the separators of PCRs 0-7, PCR 5 the
            GPT, PCR 4 "Calling EFI Application from Boot Option", then
            shim: EV_EFI_BOOT_SERVICES_APPLICATION, its digest the
            Authenticode SHA-256 of the image (EDK2 Tcg2 PE_COFF_IMAGE),
            and PCR 7 EV_EFI_VARIABLE_AUTHORITY "db" of the db certificate
            that verified it (EFI_SIGNATURE_DATA)
  shim      PCR 14 MokList, MokListX (EV_IPL, digests of the variables:
            none enrolled); GRUB started: PCR 4 EV_EFI_BOOT_SERVICES_APPLICATION
            (tpm_log_pe: an EFI_IMAGE_LOAD_EVENT of zeros, the image's
            Authenticode digest), PCR 7 EV_EFI_VARIABLE_AUTHORITY "Shim" (its
            vendor certificate, raw DER: shim's tpm_measure_variable), once
            per certificate; an image verified by an enrolled key instead:
            "MokListRT" with that key's EFI_SIGNATURE_DATA
  GRUB      PCR 9 each file it reads (grub.cfg, the kernel, the initrd:
            EV_IPL, the path, the file's SHA-256), PCR 8 each command
            ("grub_cmd: ...") and the kernel's command line
            ("kernel_cmdline: ...", the digest of the line alone); the
            kernel verified through shim: PCR 4 its Authenticode digest
  firmware  PCR 5 ExitBootServices

The Authenticode digest here is this script's own (pefile for the headers,
the hash over the ranges of the specification), independent of vigil's C.

usage: mb_build.py authenticode FILE...                 (print "HEX  FILE")
       mb_build.py certs SHIM OUTDIR                     (db.der: the Microsoft
                   UEFI CA of shim's signature; vendor.der: shim's vendor_cert)
       mb_build.py log OUT --shim F --grub F --kernel F --kernel-path P
                   --initrd F --initrd-path P --cmdline LINE --db-cert DER
                   --vendor-cert DER --pk DER --kek DER
                   [--grub-key DER] [--kernel-key DER]  (a local key verified it)
"""
import argparse
import hashlib
import os
import struct
import subprocess
import sys
import tempfile
import uuid

import pefile

EV_NO_ACTION = 0x3
EV_SEPARATOR = 0x4
EV_ACTION = 0x5
EV_S_CRTM_VERSION = 0x8
EV_IPL = 0xD
EV_EFI_VARIABLE_DRIVER_CONFIG = 0x80000001
EV_EFI_BOOT_SERVICES_APPLICATION = 0x80000003
EV_EFI_GPT_EVENT = 0x80000006
EV_EFI_ACTION = 0x80000007
EV_EFI_PLATFORM_FIRMWARE_BLOB = 0x80000008
EV_EFI_VARIABLE_AUTHORITY = 0x800000E0

GLOBAL = uuid.UUID("8be4df61-93ca-11d2-aa0d-00e098032b8c")
IMGSEC = uuid.UUID("d719b2cb-3d3a-4596-a3bc-dad00e67656f")
SHIM_LOCK = uuid.UUID("605dab50-e046-4300-abb6-3dd810dd8b23")
CERT_X509 = uuid.UUID("a5c059a1-94e4-4aa7-87b5-ab155c2bf072")
CERT_SHA256 = uuid.UUID("c1c41626-504c-4092-aca9-41f936934328")
MS_OWNER = uuid.UUID("77fa9abd-0359-4d32-bd60-28f4e78f784b")
TEST_OWNER = uuid.UUID("3cc24e96-22c7-41d8-8863-8e39dcdcc2cf")


def authenticode(data):
    """SHA-256 Authenticode digest: headers less CheckSum and the security
    directory entry, sections by PointerToRawData, the tail less the
    certificate table."""
    pe = pefile.PE(data=data, fast_load=True)
    opt = pe.OPTIONAL_HEADER
    cs = opt.get_field_absolute_offset("CheckSum")
    sec = pe.OPTIONAL_HEADER.DATA_DIRECTORY[pefile.DIRECTORY_ENTRY["IMAGE_DIRECTORY_ENTRY_SECURITY"]]
    dd = sec.get_file_offset()
    hdr = opt.SizeOfHeaders
    h = hashlib.sha256()
    h.update(data[:cs])
    h.update(data[cs + 4:dd])
    h.update(data[dd + 8:hdr])
    summed = hdr
    for s in sorted((s for s in pe.sections if s.SizeOfRawData),
                    key=lambda s: s.PointerToRawData):
        h.update(data[s.PointerToRawData:s.PointerToRawData + s.SizeOfRawData])
        summed += s.SizeOfRawData
    if len(data) > summed:
        h.update(data[summed:len(data) - sec.Size])
    return h.digest()


def certs(shim, outdir):
    data = open(shim, "rb").read()
    pe = pefile.PE(data=data, fast_load=True)
    sec = pe.OPTIONAL_HEADER.DATA_DIRECTORY[pefile.DIRECTORY_ENTRY["IMAGE_DIRECTORY_ENTRY_SECURITY"]]
    length, _rev, _typ = struct.unpack_from("<IHH", data, sec.VirtualAddress)
    pkcs7 = data[sec.VirtualAddress + 8:sec.VirtualAddress + length]
    with tempfile.TemporaryDirectory() as d:
        open(os.path.join(d, "p7"), "wb").write(pkcs7)
        pem = subprocess.run(["openssl", "pkcs7", "-inform", "DER", "-in", os.path.join(d, "p7"),
                              "-print_certs"], check=True, capture_output=True, text=True).stdout
        blocks = [b + "-----END CERTIFICATE-----\n" for b in pem.split("-----END CERTIFICATE-----")
                  if "BEGIN CERTIFICATE" in b]
        ca = None
        for b in blocks:
            subj = b.split("subject=", 1)[1].split("\n", 1)[0] if "subject=" in b else ""
            if "UEFI CA" in subj:
                ca = b[b.index("-----BEGIN"):]
        if not ca:
            sys.exit("no Microsoft UEFI CA in shim's signature")
        der = subprocess.run(["openssl", "x509", "-outform", "DER"], input=ca.encode(),
                             check=True, capture_output=True).stdout
    open(os.path.join(outdir, "db.der"), "wb").write(der)
    fh = pe.FILE_HEADER
    strtab = fh.PointerToSymbolTable + 18 * fh.NumberOfSymbols

    def name(s):
        n = s.Name.rstrip(b"\0")
        if n.startswith(b"/") and n[1:].isdigit():	# a long name, in the COFF string table
            o = strtab + int(n[1:])
            n = data[o:data.index(b"\0", o)]
        return n

    for s in pe.sections:
        if name(s) == b".vendor_cert":
            raw = s.get_data()
            size, _dsize, off, _doff = struct.unpack_from("<IIII", raw, 0)
            open(os.path.join(outdir, "vendor.der"), "wb").write(raw[off:off + size])
            return
    sys.exit("shim has no .vendor_cert section")


class Log:
    def __init__(self):
        self.b = bytearray()
        # Spec ID Event03: one algorithm, sha256
        spec = (b"Spec ID Event03\0" + struct.pack("<IBBBBI", 0, 0, 2, 0, 2, 1) +
                struct.pack("<HH", 0x0B, 32) + b"\0")
        self.b += struct.pack("<II", 0, EV_NO_ACTION) + b"\0" * 20 + struct.pack("<I", len(spec)) + spec

    def ev(self, pcr, typ, data, digest=None):
        d = digest if digest is not None else hashlib.sha256(data).digest()
        self.b += struct.pack("<III", pcr, typ, 1) + struct.pack("<H", 0x0B) + d
        self.b += struct.pack("<I", len(data)) + data


def uvar(guid, name, data):
    n = name.encode("utf-16-le")
    return guid.bytes_le + struct.pack("<QQ", len(name), len(data)) + n + data


def siglist(sigtype, owner, entries):
    size = 16 + len(entries[0])
    body = b"".join(owner.bytes_le + e for e in entries)
    return sigtype.bytes_le + struct.pack("<III", 28 + len(body), 0, size) + body


def sigdata(owner, der):
    return owner.bytes_le + der


def devpath_file(path):
    # HD(1,GPT,...) media node, then a file path node, then the end node
    hd = struct.pack("<BBH", 4, 1, 42) + struct.pack("<IQQ", 1, 2048, 1048576) + b"\x11" * 16 + b"\x02\x02"
    f = (path + "\0").encode("utf-16-le")
    fp = struct.pack("<BBH", 4, 4, 4 + len(f)) + f
    return hd + fp + b"\x7f\xff\x04\x00"


def image_load(devpath):
    return struct.pack("<QQQQ", 0, 0, 0, len(devpath)) + devpath


def build(a):
    rd = lambda p: open(p, "rb").read()
    shim, grub, kernel, initrd = rd(a.shim), rd(a.grub), rd(a.kernel), rd(a.initrd)
    L = Log()
    L.ev(0, EV_S_CRTM_VERSION, "vigil test firmware 1.0".encode("utf-16-le") + b"\0\0")
    L.ev(0, EV_EFI_PLATFORM_FIRMWARE_BLOB, struct.pack("<QQ", 0xFFC00000, 0x400000),
         hashlib.sha256(b"vigil test firmware volume").digest())
    L.ev(7, EV_EFI_VARIABLE_DRIVER_CONFIG, uvar(GLOBAL, "SecureBoot", b"\x01"))
    L.ev(7, EV_EFI_VARIABLE_DRIVER_CONFIG, uvar(GLOBAL, "PK", siglist(CERT_X509, TEST_OWNER, [rd(a.pk)])))
    L.ev(7, EV_EFI_VARIABLE_DRIVER_CONFIG, uvar(GLOBAL, "KEK", siglist(CERT_X509, TEST_OWNER, [rd(a.kek)])))
    L.ev(7, EV_EFI_VARIABLE_DRIVER_CONFIG, uvar(IMGSEC, "db", siglist(CERT_X509, MS_OWNER, [rd(a.db_cert)])))
    L.ev(7, EV_EFI_VARIABLE_DRIVER_CONFIG,
         uvar(IMGSEC, "dbx", siglist(CERT_SHA256, TEST_OWNER, [hashlib.sha256(b"revoked").digest()])))
    for pcr in range(8):
        L.ev(pcr, EV_SEPARATOR, b"\0\0\0\0")
    L.ev(5, EV_EFI_GPT_EVENT, b"EFI PART" + b"\0" * 84 + struct.pack("<Q", 0))
    L.ev(4, EV_EFI_ACTION, b"Calling EFI Application from Boot Option")
    # firmware starts shim, verified by the db certificate
    L.ev(4, EV_EFI_BOOT_SERVICES_APPLICATION, image_load(devpath_file("\\EFI\\debian\\shimx64.efi")),
         authenticode(shim))
    L.ev(7, EV_EFI_VARIABLE_AUTHORITY, uvar(IMGSEC, "db", sigdata(MS_OWNER, rd(a.db_cert))))
    # shim: its MOK lists (none enrolled), then GRUB
    L.ev(14, EV_IPL, b"MokList\0", hashlib.sha256(b"").digest())
    L.ev(14, EV_IPL, b"MokListX\0", hashlib.sha256(b"").digest())
    measured = set()

    def shim_verified(key):
        if key is None:
            der, name, data = rd(a.vendor_cert), "Shim", rd(a.vendor_cert)
        else:
            der, name = rd(key), "MokListRT"
            data = sigdata(TEST_OWNER, der)
        if (name, der) not in measured:
            measured.add((name, der))
            L.ev(7, EV_EFI_VARIABLE_AUTHORITY, uvar(SHIM_LOCK, name, data))

    L.ev(4, EV_EFI_BOOT_SERVICES_APPLICATION, b"\0" * 40 + b"\0", authenticode(grub))
    shim_verified(a.grub_key)
    # GRUB: its configuration, the kernel, the command line, the initrd
    cfg = ("linux %s %s\ninitrd %s\n" % (a.kernel_path, a.cmdline.split(" ", 1)[1], a.initrd_path)).encode()
    L.ev(9, EV_IPL, b"/boot/grub/grub.cfg\0", hashlib.sha256(cfg).digest())
    for cmd in ["set root='hd0,gpt2'", "linux " + a.cmdline]:
        L.ev(8, EV_IPL, ("grub_cmd: " + cmd).encode() + b"\0", hashlib.sha256(cmd.encode()).digest())
    L.ev(9, EV_IPL, a.kernel_path.encode() + b"\0", hashlib.sha256(kernel).digest())
    L.ev(4, EV_EFI_BOOT_SERVICES_APPLICATION, b"\0" * 40 + b"\0", authenticode(kernel))
    shim_verified(a.kernel_key)
    L.ev(8, EV_IPL, ("kernel_cmdline: " + a.cmdline).encode() + b"\0",
         hashlib.sha256(a.cmdline.encode()).digest())
    cmd = "initrd " + a.initrd_path
    L.ev(8, EV_IPL, ("grub_cmd: " + cmd).encode() + b"\0", hashlib.sha256(cmd.encode()).digest())
    L.ev(9, EV_IPL, a.initrd_path.encode() + b"\0", hashlib.sha256(initrd).digest())
    L.ev(5, EV_EFI_ACTION, b"Exit Boot Services Invocation")
    L.ev(5, EV_EFI_ACTION, b"Exit Boot Services Returned with Success")
    open(a.out, "wb").write(L.b)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "authenticode":
        for f in sys.argv[2:]:
            print("%s  %s" % (authenticode(open(f, "rb").read()).hex(), f))
        return
    if len(sys.argv) == 4 and sys.argv[1] == "certs":
        certs(sys.argv[2], sys.argv[3])
        return
    p = argparse.ArgumentParser()
    p.add_argument("cmd", choices=["log"])
    p.add_argument("out")
    for o in ["shim", "grub", "kernel", "kernel-path", "initrd", "initrd-path", "cmdline",
              "db-cert", "vendor-cert", "pk", "kek"]:
        p.add_argument("--" + o, required=True)
    p.add_argument("--grub-key")
    p.add_argument("--kernel-key")
    build(p.parse_args())


if __name__ == "__main__":
    main()
