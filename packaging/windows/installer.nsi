; The Windows installer: 64-bit, per user, no administrator rights. It
; installs both programs in %LOCALAPPDATA%\Programs\MCP Sandbox, adds that
; folder to the user's PATH (HKCU\Environment), adds Start-menu shortcuts
; and an uninstaller (Settings > Apps lists it), and offers to start the
; tray, which sets up Claude Desktop and Cursor on its first start.
;
; The uninstaller removes what the installer and the tray made: the files,
; the shortcuts, the uninstall key, the tray's "start at login" value, the
; PATH entry (only its own; the rest of PATH stays byte for byte), the
; mcp-sandbox entries in AI clients' configs (`mcp-sandbox clients
; uninstall --all`, each with a backup), Fyne's preferences in
; %APPDATA%\fyne and the tray's runtime files. It keeps the user's own data
; in %LOCALAPPDATA%\mcp-sandbox: config.toml, logs, the audit log and the
; sandbox records (a reinstall finds its sandboxes by them), and says so.
;
; Built by packaging/build.sh windows with makensis; it defines VERSION,
; FILE_VERSION (a.b.c.d), COMMIT, APP_ID, SRC (the directory with the two
; .exe and the .ico) and OUTFILE; and SIGN (sign.sh) when a certificate is
; provided.

Target amd64-unicode
!ifdef SIGN
  ; sign.sh signs the uninstaller before it is packed into the installer.
  !uninstfinalize '"${SIGN}" "%1"' = 0
!endif
ManifestDPIAware true
RequestExecutionLevel user
SetCompressor /SOLID lzma

!include "MUI2.nsh"
!include "LogicLib.nsh"
!include "WinMessages.nsh"

!define APP "MCP Sandbox"
!define TRAY "mcp-sandbox-tray.exe"
!define WINDOW "mcp-sandbox-window.exe"
!define SERVER "mcp-sandbox.exe"
!define UNINSTALL_KEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\${APP}"
!define RUN_KEY "Software\Microsoft\Windows\CurrentVersion\Run"
!define ENV_KEY "Environment"

Name "${APP}"
Caption "${APP} ${VERSION} Setup"
OutFile "${OUTFILE}"
InstallDir "$LOCALAPPDATA\Programs\${APP}"
InstallDirRegKey HKCU "${UNINSTALL_KEY}" "InstallLocation"
BrandingText "${APP} ${VERSION} (${COMMIT})"

VIProductVersion "${FILE_VERSION}"
VIFileVersion "${FILE_VERSION}"
VIAddVersionKey /LANG=1033 "ProductName" "${APP}"
VIAddVersionKey /LANG=1033 "ProductVersion" "${VERSION}"
VIAddVersionKey /LANG=1033 "FileVersion" "${VERSION}"
VIAddVersionKey /LANG=1033 "FileDescription" "${APP} ${VERSION} Setup"
VIAddVersionKey /LANG=1033 "CompanyName" "MCP Sandbox"
VIAddVersionKey /LANG=1033 "LegalCopyright" "The MCP Sandbox authors"

!define MUI_ICON "${SRC}\mcp-sandbox.ico"
!define MUI_UNICON "${SRC}\mcp-sandbox.ico"
!define MUI_ABORTWARNING
!define MUI_FINISHPAGE_RUN "$INSTDIR\${TRAY}"
!define MUI_FINISHPAGE_RUN_TEXT "Start ${APP} (it sets up Claude Desktop and Cursor)"

!insertmacro MUI_PAGE_DIRECTORY
!insertmacro MUI_PAGE_INSTFILES
!insertmacro MUI_PAGE_FINISH
!insertmacro MUI_UNPAGE_CONFIRM
!insertmacro MUI_UNPAGE_INSTFILES
!insertmacro MUI_LANGUAGE "English"

; StopTray ends a running tray so its file can be replaced or removed:
; first politely, then for good.
!macro StopTray
  nsExec::Exec 'taskkill /F /IM ${WINDOW}'
  Pop $0
  nsExec::Exec 'taskkill /IM ${TRAY}'
  Pop $0
  ${If} $0 == 0
    Sleep 1500
    nsExec::Exec 'taskkill /F /IM ${TRAY}'
    Pop $0
  ${EndIf}
!macroend

;-----------------------------------------------------------------------
; The user's PATH (HKCU\Environment\Path). NSIS strings hold at most
; NSIS_MAX_STRLEN characters (1024 in Debian's build): a longer PATH is
; left untouched, with a message, rather than cut short.

; PathType: $1 = the value's registry type (1 REG_SZ, 2 REG_EXPAND_SZ;
; 0 when there is no Path value), $2 = its size in characters with the
; terminating NUL.
!macro PathTypeFn PFX
Function ${PFX}PathType
  StrCpy $1 0
  StrCpy $2 0
  ; RegGetValueW(HKEY_CURRENT_USER, "Environment", "Path",
  ;   RRF_RT_ANY | RRF_NOEXPAND, &type, NULL, &bytes)
  System::Call 'advapi32::RegGetValueW(p 0x80000001, w "${ENV_KEY}", w "Path", i 0x1000ffff, *i .r1, p 0, *i .r2) i .r0'
  ${If} $0 != 0
    StrCpy $1 0
    StrCpy $2 0
  ${Else}
    IntOp $2 $2 / 2
  ${EndIf}
FunctionEnd
!macroend
!insertmacro PathTypeFn ""
!insertmacro PathTypeFn "un."

; PathWithout: $R0 = a PATH, $R1 = an entry; returns $R2 = $R0 without every
; entry equal to $R1 (case-insensitively, as Windows compares paths), each
; with one separator, the other entries and separators as they were;
; $R3 = how many it dropped, $R8 = 1 when the last entry was one of them.
!macro PathWithoutFn PFX
Function ${PFX}PathWithout
  Push $R4
  Push $R5
  Push $R6
  Push $R7
  StrCpy $R2 ""
  StrCpy $R3 0
  StrCpy $R4 "" ; the entry being read
  StrCpy $R5 0  ; index into $R0
  StrCpy $R7 0  ; 1 once $R2 holds an entry
  StrCpy $R8 0
  ${Do}
    StrCpy $R6 $R0 1 $R5
    ${If} $R6 == ";"
    ${OrIf} $R6 == ""
      StrCpy $R8 0
      ${If} $R4 == $R1
        IntOp $R3 $R3 + 1
        StrCpy $R8 1
      ${ElseIf} $R7 == 1
        StrCpy $R2 "$R2;$R4"
      ${Else}
        StrCpy $R2 $R4
        StrCpy $R7 1
      ${EndIf}
      StrCpy $R4 ""
      ${IfThen} $R6 == "" ${|} ${ExitDo} ${|}
    ${Else}
      StrCpy $R4 "$R4$R6"
    ${EndIf}
    IntOp $R5 $R5 + 1
  ${Loop}
  Pop $R7
  Pop $R6
  Pop $R5
  Pop $R4
FunctionEnd
!macroend
!insertmacro PathWithoutFn ""
!insertmacro PathWithoutFn "un."

; PathAdd appends $INSTDIR to the user's PATH unless it is on it, keeps the
; value's type, records the entry in the uninstall key for the uninstaller,
; and tells running programs (Explorer) that the environment changed.
Function PathAdd
  Call PathType
  IntOp $3 ${NSIS_MAX_STRLEN} - 2
  StrLen $4 "$INSTDIR"
  IntOp $3 $3 - $4
  ${If} $2 > $3
    DetailPrint "Your PATH is too long for this installer to edit safely; add $INSTDIR to it yourself."
    MessageBox MB_ICONINFORMATION|MB_OK "Your PATH is too long for this installer to edit safely. Add this folder to it yourself to run mcp-sandbox from a terminal:$\r$\n$INSTDIR" /SD IDOK
    Return
  ${EndIf}
  ReadRegStr $R0 HKCU "${ENV_KEY}" "Path"
  StrCpy $R1 "$INSTDIR"
  Call PathWithout
  ${If} $R3 > 0
    DetailPrint "$INSTDIR is already on your PATH"
    Return
  ${EndIf}
  ${If} $1 == 0
    WriteRegExpandStr HKCU "${ENV_KEY}" "Path" "$INSTDIR"
    WriteRegDWORD HKCU "${UNINSTALL_KEY}" "PathCreated" 1
  ${Else}
    ; A separator unless the value is empty or ends with one (an empty
    ; entry trips some programs, Wine's cmd among them); PathNoSeparator
    ; tells the uninstaller to give the trailing ";" back.
    StrCpy $4 $R0 1 -1
    ${If} $R0 == ""
      StrCpy $R0 "$INSTDIR"
    ${ElseIf} $4 == ";"
      StrCpy $R0 "$R0$INSTDIR"
      WriteRegDWORD HKCU "${UNINSTALL_KEY}" "PathNoSeparator" 1
    ${Else}
      StrCpy $R0 "$R0;$INSTDIR"
    ${EndIf}
    ${If} $1 == 1
      WriteRegStr HKCU "${ENV_KEY}" "Path" $R0
    ${Else}
      WriteRegExpandStr HKCU "${ENV_KEY}" "Path" $R0
    ${EndIf}
  ${EndIf}
  WriteRegStr HKCU "${UNINSTALL_KEY}" "PathEntry" "$INSTDIR"
  DetailPrint "Added $INSTDIR to your PATH (new terminals see it)"
  SendMessage ${HWND_BROADCAST} ${WM_SETTINGCHANGE} 0 "STR:Environment" /TIMEOUT=5000
FunctionEnd

; un.PathRemove takes out the entry PathAdd recorded, and nothing else.
Function un.PathRemove
  ReadRegStr $R1 HKCU "${UNINSTALL_KEY}" "PathEntry"
  ${IfThen} $R1 == "" ${|} Return ${|}
  Call un.PathType
  ${IfThen} $1 == 0 ${|} Return ${|}
  ${If} $2 >= ${NSIS_MAX_STRLEN}
    DetailPrint "Your PATH is too long for this uninstaller to edit safely; remove $R1 from it yourself."
    MessageBox MB_ICONINFORMATION|MB_OK "Your PATH is too long for this uninstaller to edit safely. Remove this folder from it yourself:$\r$\n$R1" /SD IDOK
    Return
  ${EndIf}
  ReadRegStr $R0 HKCU "${ENV_KEY}" "Path"
  Call un.PathWithout
  ${IfThen} $R3 == 0 ${|} Return ${|}
  ReadRegDWORD $4 HKCU "${UNINSTALL_KEY}" "PathNoSeparator"
  ${If} $4 == 1
  ${AndIf} $R8 == 1
    StrCpy $R2 "$R2;"
  ${EndIf}
  ReadRegDWORD $4 HKCU "${UNINSTALL_KEY}" "PathCreated"
  ${If} $R2 == ""
  ${AndIf} $4 == 1
    DeleteRegValue HKCU "${ENV_KEY}" "Path"
  ${ElseIf} $1 == 1
    WriteRegStr HKCU "${ENV_KEY}" "Path" $R2
  ${Else}
    WriteRegExpandStr HKCU "${ENV_KEY}" "Path" $R2
  ${EndIf}
  DetailPrint "Removed $R1 from your PATH"
  SendMessage ${HWND_BROADCAST} ${WM_SETTINGCHANGE} 0 "STR:Environment" /TIMEOUT=5000
FunctionEnd

Section "Install"
  SetShellVarContext current
  !insertmacro StopTray
  SetOutPath "$INSTDIR"
  ; An AI client may be running the server right now. Windows lets a
  ; running program's file be renamed, not replaced: move it aside.
  Delete "$INSTDIR\${SERVER}.old"
  ${If} ${FileExists} "$INSTDIR\${SERVER}"
    Rename "$INSTDIR\${SERVER}" "$INSTDIR\${SERVER}.old"
  ${EndIf}
  File "${SRC}\${TRAY}"
  File "${SRC}\${WINDOW}"
  File "${SRC}\${SERVER}"
  Delete /REBOOTOK "$INSTDIR\${SERVER}.old"
  WriteUninstaller "$INSTDIR\Uninstall.exe"

  CreateDirectory "$SMPROGRAMS\${APP}"
  CreateShortcut "$SMPROGRAMS\${APP}\${APP}.lnk" "$INSTDIR\${TRAY}" "" "$INSTDIR\${TRAY}" 0
  CreateShortcut "$SMPROGRAMS\${APP}\Uninstall ${APP}.lnk" "$INSTDIR\Uninstall.exe"

  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayName" "${APP}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayIcon" "$INSTDIR\${TRAY},0"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "Publisher" "MCP Sandbox"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "URLInfoAbout" "https://github.com/mcp-sandbox/mcp-sandbox"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "UninstallString" '"$INSTDIR\Uninstall.exe"'
  WriteRegStr HKCU "${UNINSTALL_KEY}" "QuietUninstallString" '"$INSTDIR\Uninstall.exe" /S'
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "NoModify" 1
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "NoRepair" 1
  SectionGetSize 0 $0
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "EstimatedSize" $0
  Call PathAdd
SectionEnd

Section "Uninstall"
  SetShellVarContext current
  !insertmacro StopTray
  ; The entries the tray (or the user) wrote into Claude Desktop's,
  ; Cursor's and the other clients' configs would point at a removed
  ; program: take them out while it is still here (each file gets a backup).
  ; --if-command: only the entries that run this copy; one a user pointed at
  ; another program stays, and the output says so.
  ${If} ${FileExists} "$INSTDIR\${SERVER}"
    DetailPrint "Removing the mcp-sandbox entries from AI clients' configs:"
    nsExec::ExecToLog '"$INSTDIR\${SERVER}" clients uninstall --all --if-command "$INSTDIR\${SERVER}"'
    Pop $0
    ${If} $0 != 0
      DetailPrint "mcp-sandbox clients uninstall --all failed ($0); remove the mcp-sandbox entries yourself"
    ${EndIf}
  ${EndIf}
  Delete "$INSTDIR\${TRAY}"
  Delete "$INSTDIR\${WINDOW}"
  Delete /REBOOTOK "$INSTDIR\${SERVER}"
  Delete "$INSTDIR\${SERVER}.old"
  Delete "$INSTDIR\Uninstall.exe"
  RMDir "$INSTDIR"
  Delete "$SMPROGRAMS\${APP}\${APP}.lnk"
  Delete "$SMPROGRAMS\${APP}\Uninstall ${APP}.lnk"
  RMDir "$SMPROGRAMS\${APP}"
  Call un.PathRemove
  DeleteRegKey HKCU "${UNINSTALL_KEY}"
  ; The tray's "start at login" entry would point at a removed file.
  DeleteRegValue HKCU "${RUN_KEY}" "${APP}"
  ; Fyne's preferences for the tray, and its folder if nothing else uses it.
  RMDir /r "$APPDATA\fyne\${APP_ID}"
  RMDir "$APPDATA\fyne"
  ; The tray's runtime files, and its first-run mark (the client entries
  ; are gone, so a new install sets them up again); the user's config,
  ; logs, audit log and sandbox records stay.
  Delete "$LOCALAPPDATA\mcp-sandbox\tray-first-run"
  Delete "$LOCALAPPDATA\mcp-sandbox\logs\tray.log.lock"
  Delete "$LOCALAPPDATA\mcp-sandbox\tray.lock"
  Delete "$LOCALAPPDATA\mcp-sandbox\tray.sock"
  Delete "$LOCALAPPDATA\mcp-sandbox\http-token"
  Delete "$LOCALAPPDATA\mcp-sandbox\paused"
  Delete "$LOCALAPPDATA\mcp-sandbox\tray.json"
  Delete "$LOCALAPPDATA\mcp-sandbox\logs\window.log.lock"
  Delete "$LOCALAPPDATA\mcp-sandbox\window\tray.lock"
  Delete "$LOCALAPPDATA\mcp-sandbox\window\tray.sock"
  RMDir "$LOCALAPPDATA\mcp-sandbox\window"
  RMDir "$LOCALAPPDATA\mcp-sandbox\sandboxes"
  RMDir "$LOCALAPPDATA\mcp-sandbox"
  ${If} ${FileExists} "$LOCALAPPDATA\mcp-sandbox\*.*"
    DetailPrint "Kept your settings, logs and audit log in $LOCALAPPDATA\mcp-sandbox (delete the folder to remove them)"
  ${EndIf}
SectionEnd
