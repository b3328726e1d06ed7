import pbr.version

version_info = pbr.version.VersionInfo('climate')


def version_string():
    try:
        return version_info.version_string()
    except Exception:  # running from a tree without metadata
        return 'unknown'
